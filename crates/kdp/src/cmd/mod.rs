pub mod decode;
pub mod demo;
pub mod describe;
pub mod encode;
pub mod exporter;
pub mod mock_broker;
mod wire_io;
