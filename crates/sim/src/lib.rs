//! A deterministic, bit-time-accurate discrete-event simulator of DCB links and fabrics,
//! driving the sans-IO engines of `lossless-proto`.
