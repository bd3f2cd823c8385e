//! The shared store suite: every store trait (`TaskStore`, `SignalStore`, `DocumentStore`,
//! `TeamStore`) driven by one scenario on each of Baton's three stores, the folder,
//! PostgreSQL, and PostgreSQL through PgBouncer, whose answers must be the same (as River's
//! driver test suite runs every driver through every interface). `every_store` is the harness;
//! each other module is one trait's scenarios.

mod documents;
mod every_store;
mod signals;
mod tasks;
mod team;
