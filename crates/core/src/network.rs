//! What a sandbox's network reaches (`sandbox.network` of a profile, `check_network` of the
//! review settings): an allow-list through Baton's proxy (the default), nothing, or the
//! machine's whole network. `baton-team` builds each ([`Network`] is only the setting).

use serde::{Deserialize, Serialize};

/// A sandboxed agent's network (`sandbox.network`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// The model API, the package registries and `sandbox.allow`, through a proxy outside the
    /// sandbox that says in the transcript what it refused.
    #[default]
    AllowList,
    /// None at all (loopback inside the sandbox only).
    Off,
    /// The machine's network, as the user has it (`true` says the same).
    Open,
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(to: D) -> std::result::Result<Network, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Said {
            Flag(bool),
            Word(String),
        }
        match Said::deserialize(to)? {
            Said::Flag(true) => Ok(Network::Open),
            Said::Flag(false) => Ok(Network::Off),
            Said::Word(word) => match word.as_str() {
                "allow-list" => Ok(Network::AllowList),
                "off" => Ok(Network::Off),
                "open" => Ok(Network::Open),
                other => Err(serde::de::Error::custom(format!(
                    "the network setting is \"allow-list\", \"off\" or \"open\", not {other:?}"
                ))),
            },
        }
    }
}
