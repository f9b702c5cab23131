//! [`Packet`]: the checked zero-copy view of a MAC Control payload (opcode first).

use super::*;
use crate::{Error, Result};

/// A checked zero-copy view of a MAC Control payload (opcode first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    pub(super) buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps `buffer` without checking; getters may panic when it is too short for them.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }
    /// Wraps `buffer` after checking it holds the opcode and the fields that opcode defines.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }
    /// Checks the buffer holds the opcode and, for PAUSE and PFC, all of their fields.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < OPCODE_LEN {
            return Err(Error::truncated(0, CTX, "opcode", OPCODE_LEN, len));
        }
        let (need, field) = match self.opcode() {
            OPCODE_PAUSE => (PAUSE_LEN, "pause_time"),
            OPCODE_PFC => (PFC_LEN, "time"),
            _ => (OPCODE_LEN, "opcode"),
        };
        if len < need {
            return Err(Error::truncated(
                OPCODE_LEN,
                CTX,
                field,
                need - OPCODE_LEN,
                len - OPCODE_LEN,
            ));
        }
        Ok(())
    }
    /// Consumes the view and returns the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    fn u16_at(&self, at: usize) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[at], b[at + 1]])
    }
    /// The opcode.
    pub fn opcode(&self) -> u16 {
        self.u16_at(0)
    }
    /// PAUSE: the pause_time in quanta of 512 bit times.
    pub fn pause_time(&self) -> u16 {
        self.u16_at(2)
    }
    /// PFC: the priority_enable_vector, raw (the high byte should be zero).
    pub fn priority_enable_vector(&self) -> u16 {
        self.u16_at(2)
    }
    /// PFC: `time[priority]` in quanta (`priority` 0..=7).
    pub fn time(&self, priority: usize) -> u16 {
        self.u16_at(4 + 2 * priority)
    }
    /// The bytes after the opcode.
    pub fn params(&self) -> &[u8] {
        &self.buffer.as_ref()[OPCODE_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16(&mut self, at: usize, v: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }
    /// Sets the opcode.
    pub fn set_opcode(&mut self, v: u16) {
        self.set_u16(0, v)
    }
    /// PAUSE: sets pause_time.
    pub fn set_pause_time(&mut self, v: u16) {
        self.set_u16(2, v)
    }
    /// PFC: sets the raw priority_enable_vector.
    pub fn set_priority_enable_vector(&mut self, v: u16) {
        self.set_u16(2, v)
    }
    /// PFC: sets `time[priority]` (`priority` 0..=7).
    pub fn set_time(&mut self, priority: usize, v: u16) {
        self.set_u16(4 + 2 * priority, v)
    }
}
