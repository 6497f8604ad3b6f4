pub mod decode;
pub mod demo;
pub mod describe;
pub mod mock_broker;
