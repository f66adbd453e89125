//! tasks tests.
