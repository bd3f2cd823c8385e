//! A sandbox's network: none of its own but loopback, and an HTTP proxy outside ([`proxy`])
//! that reaches only what an allow-list names ([`allow_list`]).

pub mod allow_list;
pub mod proxy;

pub use allow_list::AllowList;
pub use proxy::NetProxy;
