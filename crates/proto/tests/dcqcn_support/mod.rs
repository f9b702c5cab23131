//! Helpers shared by the DCQCN integration tests.

#![allow(dead_code)]

pub mod reference;
