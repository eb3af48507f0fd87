//! How a parse answer's media URLs reach the caller: the request's
//! `delivery`, else its key's setting, else direct.

use std::str::FromStr;

/// How a parse answer's media URLs reach the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// The platform's own URLs and the headers they need (SPEC).
    #[default]
    Direct,
    /// URLs through this service's tunnel, no headers needed.
    Tunnel,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Direct => "direct",
            Delivery::Tunnel => "tunnel",
        }
    }
}

impl FromStr for Delivery {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "direct" => Ok(Delivery::Direct),
            "tunnel" => Ok(Delivery::Tunnel),
            _ => Err(format!(
                "delivery must be \"direct\" or \"tunnel\", not {s:?}"
            )),
        }
    }
}
