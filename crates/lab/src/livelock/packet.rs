//! The datagram every device sends: device number, sequence number and send time
//! (CLOCK_MONOTONIC ns, comparable across processes on one machine), padded to the payload
//! size. Device number `END` marks the end of a device's sending (its sequence field then
//! carries the device's index).

/// Header bytes: dev (u32), seq (u64), sent_ns (u64).
pub const HEADER: usize = 20;
/// The device number of an end-of-sending marker.
pub const END: u32 = u32::MAX;

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub dev: u32,
    pub seq: u64,
    pub sent_ns: u64,
}

/// Write the header into the first [`HEADER`] bytes of `buf`.
pub fn encode(buf: &mut [u8], h: Header) {
    buf[0..4].copy_from_slice(&h.dev.to_le_bytes());
    buf[4..12].copy_from_slice(&h.seq.to_le_bytes());
    buf[12..20].copy_from_slice(&h.sent_ns.to_le_bytes());
}

/// Read a header; `None` for a datagram too short to be ours.
pub fn decode(buf: &[u8]) -> Option<Header> {
    if buf.len() < HEADER {
        return None;
    }
    Some(Header {
        dev: u32::from_le_bytes(buf[0..4].try_into().ok()?),
        seq: u64::from_le_bytes(buf[4..12].try_into().ok()?),
        sent_ns: u64::from_le_bytes(buf[12..20].try_into().ok()?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = [0u8; 32];
        let h = Header { dev: 2, seq: 77, sent_ns: 123_456_789 };
        encode(&mut b, h);
        assert_eq!(decode(&b), Some(h));
        assert_eq!(decode(&b[..10]), None);
    }
}
