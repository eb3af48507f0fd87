//! Platform data as it travels from the guest to the answer: JSON text,
//! never a `Value` tree — as the guest wrote it ([`GuestPlatformData`])
//! until an answer shows it, then sanitized ([`PlatformData`]).

use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Secrets;
use super::sanitize::text::{self, SanitizeError};

/// A parse's platform data: the text of a JSON object, sanitized
/// ([`super::sanitize`]). Cloning shares the text (the parse cache keeps
/// one copy); serializing writes it as it is, without parsing it again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformData(Arc<str>);

impl PlatformData {
    /// The guest's JSON text, sanitized; refused unless it is a JSON object.
    pub fn from_guest(text: &str) -> Result<PlatformData, SanitizeError> {
        text::sanitize(text).map(|clean| PlatformData(clean.into()))
    }

    /// An empty object.
    pub fn empty() -> PlatformData {
        PlatformData(Arc::from("{}"))
    }

    /// This data with every configured secret masked
    /// ([`Secrets::redact_json`] on the text).
    pub fn redacted(&self, secrets: &Secrets) -> PlatformData {
        if !secrets.may_leak_in_json(&self.0) {
            return self.clone();
        }
        match text::redact(&self.0, secrets) {
            Ok(clean) if *clean == *self.0 => self.clone(),
            Ok(clean) => PlatformData(clean.into()),
            Err(e) => {
                // Unreachable for sanitized text; never answer unredacted.
                tracing::error!(error = %e, "platform data could not be redacted; answering an empty object");
                PlatformData::empty()
            }
        }
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The data as a `Value` (tests, and answers that need a tree).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::from_str(&self.0).unwrap_or_default()
    }
}

/// Platform data as a guest wrote it, not yet checked. Only the platform
/// endpoint's answer shows platform data, so a parse sanitizes it only when
/// its answer will show it, and at most once per extraction however many
/// answers share it (the parse cache keeps this, not the sanitized text).
#[derive(Clone, Debug)]
pub struct GuestPlatformData(Arc<GuestText>);

#[derive(Debug)]
struct GuestText {
    text: String,
    clean: OnceLock<Result<PlatformData, SanitizeError>>,
}

impl GuestPlatformData {
    pub fn new(text: String) -> GuestPlatformData {
        GuestPlatformData(Arc::new(GuestText {
            text,
            clean: OnceLock::new(),
        }))
    }

    /// The text sanitized ([`PlatformData::from_guest`]), or why it cannot
    /// be; worked out on the first call, remembered for the others.
    pub fn sanitized(&self) -> Result<PlatformData, &SanitizeError> {
        self.0
            .clean
            .get_or_init(|| PlatformData::from_guest(&self.0.text))
            .as_ref()
            .cloned()
    }

    /// Whether the text has been sanitized yet.
    #[cfg(test)]
    fn is_sanitized(&self) -> bool {
        self.0.clean.get().is_some()
    }
}

/// serde_json's name for a raw JSON value: its serializer writes the text
/// as it is, and `serde_json::to_value` parses it (what
/// `serde_json::value::RawValue` serializes as; building a `RawValue` from
/// text would scan the text once more to check what the sanitizer wrote).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

impl Serialize for PlatformData {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut raw = serializer.serialize_struct(RAW_TOKEN, 1)?;
        raw.serialize_field(RAW_TOKEN, &*self.0)?;
        raw.end()
    }
}

/// Read back from a stored answer (written by this service, so already
/// sanitized): the text as it was, kept raw.
impl<'de> Deserialize<'de> for PlatformData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        Ok(PlatformData(Arc::from(raw.get())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_raw_json_in_text_and_in_trees() {
        let data =
            PlatformData::from_guest(r#"{"id":9007199254740993,"t":"a\u002fb","token":"x"}"#)
                .unwrap();
        assert_eq!(data.as_str(), r#"{"id":"9007199254740993","t":"a/b"}"#);
        let answer = json!({"platformData": data.clone()});
        assert_eq!(answer["platformData"]["id"], "9007199254740993");
        assert_eq!(
            serde_json::to_string(&[&data, &data]).unwrap(),
            format!("[{0},{0}]", data.as_str())
        );
        assert_eq!(
            data.to_value(),
            json!({"id": "9007199254740993", "t": "a/b"})
        );
    }

    #[test]
    fn guest_text_is_sanitized_once_on_demand() {
        let data = GuestPlatformData::new(r#"{"id":1,"token":"x"}"#.to_string());
        assert!(
            !data.is_sanitized(),
            "nothing is done before it is asked for"
        );
        let shared = data.clone();
        let clean = data.sanitized().unwrap();
        assert_eq!(clean.as_str(), r#"{"id":1}"#);
        assert!(shared.is_sanitized(), "clones share the sanitized text");
        assert!(Arc::ptr_eq(&shared.sanitized().unwrap().0, &clean.0));

        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let refused = GuestPlatformData::new(deep);
        assert!(
            refused.sanitized().is_err(),
            "deeper than anything is sanitized"
        );
        let not_object = GuestPlatformData::new("[1]".to_string());
        assert!(matches!(
            not_object.sanitized(),
            Err(SanitizeError::NotAnObject)
        ));
    }

    #[test]
    fn redaction_keeps_the_text_when_nothing_leaks() {
        let data = PlatformData::from_guest(r#"{"u":"https://x/?k=abcdef123","n":1}"#).unwrap();
        let none = Secrets::new(["zzzzzzzz".to_string()]);
        assert!(Arc::ptr_eq(&data.redacted(&none).0, &data.0));
        // An escaped secret is found although its text differs.
        let said = PlatformData::from_guest(r#"{"u":"say \"hello\" now"}"#).unwrap();
        let quoted = Secrets::new(["\"hello\"".to_string()]);
        assert_eq!(
            said.redacted(&quoted).as_str(),
            r#"{"u":"say [redacted] now"}"#
        );
        let one = Secrets::new(["abcdef123".to_string()]);
        assert_eq!(
            data.redacted(&one).as_str(),
            r#"{"u":"https://x/?k=[redacted]","n":1}"#
        );
    }
}
