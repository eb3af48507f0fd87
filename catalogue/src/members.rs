//! Listed `platformData` members: their JSON types, the check of an object
//! against them and the empty values that fill what a fetch could not supply.

use serde_json::{Map, Value};

/// JSON types SPEC.md uses for listed platformData members
/// (`type = "…"` in `platform.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "parse", derive(serde::Deserialize))]
#[cfg_attr(feature = "parse", serde(rename_all = "snake_case"))]
pub enum Kind {
    /// A JSON string (`"string"`).
    String,
    /// A JSON number (`"number"`).
    Number,
    /// A JSON object (`"object"`).
    Object,
    /// A JSON array (`"array"`).
    Array,
    /// An object, or an older JSON-string form of it (`"object_or_string"`).
    ObjectOrString,
}

impl Kind {
    /// Does this JSON value have this type?
    ///
    /// ```
    /// use mediaparse_catalogue::Kind;
    /// assert!(Kind::String.accepts(&serde_json::json!("7305827432509082913")));
    /// assert!(!Kind::Number.accepts(&serde_json::json!("1")));
    /// ```
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            Kind::String => v.is_string(),
            Kind::Number => v.is_number(),
            Kind::Object => v.is_object(),
            Kind::Array => v.is_array(),
            Kind::ObjectOrString => v.is_object() || v.is_string(),
        }
    }

    /// The type named as in `platform.toml` (`"string"`, `"object_or_string"`, …).
    pub fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "string" => Kind::String,
            "number" => Kind::Number,
            "object" => Kind::Object,
            "array" => Kind::Array,
            "object_or_string" => Kind::ObjectOrString,
            _ => return None,
        })
    }

    /// The name `platform.toml` uses for this type.
    pub fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Object => "object",
            Kind::Array => "array",
            Kind::ObjectOrString => "object_or_string",
        }
    }

    /// The empty value of this type: what a member the fetched shape could
    /// not supply is filled with (never invented data).
    pub fn empty(self) -> Value {
        match self {
            Kind::String => Value::String(String::new()),
            Kind::Number => Value::from(0),
            Kind::Object | Kind::ObjectOrString => Value::Object(Map::new()),
            Kind::Array => Value::Array(vec![]),
        }
    }
}

/// Problems with a platformData object against listed members (empty
/// when it conforms).
pub fn check_members<'a>(
    members: impl IntoIterator<Item = (&'a str, Kind)>,
    data: &Value,
) -> Vec<String> {
    let Some(object) = data.as_object() else {
        return vec!["platformData is not an object".into()];
    };
    members
        .into_iter()
        .filter_map(|(name, kind)| match object.get(name) {
            None => Some(format!("listed member `{name}` is missing")),
            Some(v) if !kind.accepts(v) => {
                Some(format!("listed member `{name}` should be {kind:?}, is {v}"))
            }
            Some(_) => None,
        })
        .collect()
}

/// Fill listed members absent from `data` with the empty value of their type.
pub fn fill_members<'a>(
    members: impl IntoIterator<Item = (&'a str, Kind)>,
    data: &mut Map<String, Value>,
) {
    for (name, kind) in members {
        if !data.contains_key(name) {
            data.insert(name.to_string(), kind.empty());
        }
    }
}

#[cfg(feature = "parse")]
impl crate::Manifest {
    /// The listed members as `(name, type)` pairs.
    pub fn listed(&self) -> impl Iterator<Item = (&str, Kind)> {
        self.members.iter().map(|m| (m.name.as_str(), m.kind))
    }

    /// Problems with a platformData object against the listed members.
    pub fn check_platform_data(&self, data: &Value) -> Vec<String> {
        check_members(self.listed(), data)
    }

    /// Fill listed members absent from `data` with the empty value of their type.
    pub fn fill_missing_members(&self, data: &mut Map<String, Value>) {
        fill_members(self.listed(), data)
    }
}

#[cfg(all(test, feature = "parse"))]
mod tests {
    use super::*;
    use crate::Manifest;
    use serde_json::json;

    #[test]
    fn kind_names_round_trip() {
        for k in [
            Kind::String,
            Kind::Number,
            Kind::Object,
            Kind::Array,
            Kind::ObjectOrString,
        ] {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("integer"), None);
    }

    fn manifest() -> Manifest {
        Manifest::parse(
            r#"
            id = "demo"
            name = "Demo"
            price = 1
            example_url = "https://demo.example/p/1"
            members = [
                { name = "id", type = "string" },
                { name = "views", type = "number" },
                { name = "play", type = "object_or_string" },
            ]
            "#,
        )
        .unwrap()
    }

    #[test]
    fn conforming_data_has_no_problems() {
        let data = json!({"id": "1", "views": 3, "play": "{}", "extra": null});
        assert!(manifest().check_platform_data(&data).is_empty());
    }

    #[test]
    fn missing_and_mistyped_members_are_named() {
        let problems = manifest().check_platform_data(&json!({"views": "3", "play": []}));
        assert_eq!(
            problems,
            [
                "listed member `id` is missing",
                "listed member `views` should be Number, is \"3\"",
                "listed member `play` should be ObjectOrString, is []",
            ]
        );
        assert_eq!(
            manifest().check_platform_data(&json!([])),
            ["platformData is not an object"]
        );
    }

    #[test]
    fn filling_adds_only_absent_members_with_empty_values() {
        let mut data = json!({"id": "9"}).as_object().unwrap().clone();
        manifest().fill_missing_members(&mut data);
        assert_eq!(
            Value::Object(data),
            json!({"id": "9", "views": 0, "play": {}})
        );
    }
}
