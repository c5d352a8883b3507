//! The cluster's secret: a random token `run` makes for each cluster, handed to its nodes in
//! the settings file (never on a command line), and required on every node-to-node and
//! admin request, so that nobody else who can reach a node can forge its cluster traffic.

use super::settings::ClusterSettings;
use rand::Rng;
use serde_json::Value;

/// The header that carries the secret.
pub const SECRET_HEADER: &str = "x-checker-secret";

/// The headers every request of a client that knows `secret` carries.
pub fn headers(secret: Option<&str>) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(value) = secret.and_then(|s| reqwest::header::HeaderValue::from_str(s).ok()) {
        headers.insert(SECRET_HEADER, value);
    }
    headers
}

/// A new random secret: 32 hexadecimal digits.
pub fn new_secret() -> String {
    let bits: u128 = rand::thread_rng().gen();
    format!("{bits:032x}")
}

/// Whether `given` is `secret`, compared in time independent of where they differ.
pub fn matches(secret: &str, given: &str) -> bool {
    let (a, b) = (secret.as_bytes(), given.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The text of a node's settings file: the cluster's settings, and the secret if any.
pub fn settings_file(settings: &ClusterSettings, secret: Option<&str>) -> String {
    let mut value = serde_json::to_value(settings).unwrap_or(Value::Null);
    if let (Some(secret), Some(fields)) = (secret, value.as_object_mut()) {
        fields.insert("secret".to_string(), Value::String(secret.to_string()));
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Reads a node's settings file: the settings, and the secret when it has one.
pub fn read_settings_file(text: &str) -> Result<(ClusterSettings, Option<String>), String> {
    let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let secret = match value.as_object_mut().and_then(|f| f.remove("secret")) {
        None => None,
        Some(Value::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic()) => {
            Some(s)
        }
        // A header carries it over HTTP: other characters would reach a link but not HTTP.
        Some(other) => {
            return Err(format!(
                "`secret` must be a non-empty string of visible ASCII characters, got {other}"
            ))
        }
    };
    let settings = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok((settings, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_file_carries_the_secret_apart_from_the_settings() {
        let settings = ClusterSettings {
            rf: 2,
            ..ClusterSettings::default()
        };
        let secret = new_secret();
        assert_eq!(secret.len(), 32);
        let text = settings_file(&settings, Some(&secret));
        assert_eq!(
            read_settings_file(&text),
            Ok((settings.clone(), Some(secret)))
        );
        let plain = settings_file(&settings, None);
        assert_eq!(read_settings_file(&plain), Ok((settings, None)));
        assert!(read_settings_file(r#"{"secret": 3}"#).is_err());
        // As JSON text: empty, a space, a tab, a letter outside ASCII.
        for unfit in ["", "two words", r"tab\there", r"caf\u00e9"] {
            let text = format!(r#"{{"secret": "{unfit}"}}"#);
            let refused = read_settings_file(&text);
            assert!(
                refused.is_err_and(|e| e.contains("visible ASCII")),
                "{unfit:?}"
            );
        }
        assert!(read_settings_file(r#"{"no_such_field": 3}"#).is_err());
    }

    #[test]
    fn only_the_same_secret_matches() {
        assert!(matches("abc", "abc"));
        assert!(!matches("abc", "abd") && !matches("abc", "ab") && !matches("abc", ""));
    }
}
