//! JSON in the seed's shape. Reading is strict: unknown fields, missing
//! fields without a schema default, and out-of-range numbers are errors that
//! name the field path.

use serde::de::DeserializeOwned;

/// A JSON input that does not fit the schema.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct JsonError {
    /// The field path, e.g. `Topics[0].Partitions[1].ErrorCode` (`.` for the root).
    pub path: String,
    pub message: String,
}

/// Parses `text` into a message, naming the failing field path.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(de).map_err(|e| JsonError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })?;
    // Like the binary decoder, refuse anything after the document.
    let mut rest = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    rest.next();
    if rest.next().is_some() {
        return Err(JsonError {
            path: ".".into(),
            message: "trailing characters after the JSON document".into(),
        });
    }
    Ok(value)
}
