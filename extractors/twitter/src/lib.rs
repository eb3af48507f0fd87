//! X / Twitter: being written.
