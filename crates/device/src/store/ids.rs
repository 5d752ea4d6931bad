//! Session ids: `ses_` and a ULID (48 bits of milliseconds since the epoch, then 80 random bits) in
//! 26 lowercase Crockford base32 characters, so ids sort by creation as plain strings.

use crate::poison::Recover;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

const PREFIX: &str = "ses_";
const ULID_CHARS: usize = 26;
/// Crockford's base32, lowercase: no i, l, o or u.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
const RANDOM_BITS: u32 = 80;
const RANDOM_MASK: u128 = (1 << RANDOM_BITS) - 1;

/// The last id this process made, as (milliseconds, random part): an id made in the same
/// millisecond (or after the clock stepped back) takes the next random value instead of a fresh
/// one, so ids from one process always sort in the order they were made.
static LAST: Mutex<(u64, u128)> = Mutex::new((0, 0));

/// A new session id, later than every id this process made before.
pub fn new_session_id() -> String {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    // A poisoned lock only means another thread panicked mid-update; the pair is still usable.
    let mut last = LAST.lock().recover();
    let (ms, random) = if now_ms > last.0 {
        (now_ms, fastrand::u128(..) & RANDOM_MASK)
    } else if last.1 < RANDOM_MASK {
        (last.0, last.1 + 1)
    } else {
        (last.0 + 1, fastrand::u128(..) & RANDOM_MASK)
    };
    *last = (ms, random);
    drop(last);
    format!("{PREFIX}{}", encode(ms, random))
}

/// Whether `s` is exactly a session id: `ses_` and 26 characters of the lowercase alphabet, the
/// first at most `7` (a ULID is 128 bits in 130). Nothing else — no separators, dots or capitals —
/// so an id that passes can only ever name a file inside the store.
pub fn is_session_id(s: &str) -> bool {
    let Some(ulid) = s.strip_prefix(PREFIX) else {
        return false;
    };
    let bytes = ulid.as_bytes();
    bytes.len() == ULID_CHARS && bytes[0] <= b'7' && bytes.iter().all(|b| ALPHABET.contains(b))
}

/// The creation time an id carries, in milliseconds since the epoch; None for what is not an id.
pub fn created_ms(id: &str) -> Option<u64> {
    if !is_session_id(id) {
        return None;
    }
    let value = id[PREFIX.len()..].bytes().fold(0u128, |value, b| {
        let digit = ALPHABET.iter().position(|a| *a == b).unwrap_or(0) as u128;
        (value << 5) | digit
    });
    Some((value >> RANDOM_BITS) as u64)
}

fn encode(ms: u64, random: u128) -> String {
    // 48 bits of time: milliseconds until the year 10889.
    let value = (u128::from(ms & ((1 << 48) - 1)) << RANDOM_BITS) | (random & RANDOM_MASK);
    (0..ULID_CHARS)
        .map(|i| {
            let shift = 5 * (ULID_CHARS - 1 - i);
            char::from(ALPHABET[((value >> shift) & 31) as usize])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_have_the_shape_and_sort_by_creation() {
        let ids: Vec<String> = (0..2000).map(|_| new_session_id()).collect();
        for id in &ids {
            assert!(is_session_id(id), "{id}");
            assert_eq!(id.len(), 4 + 26);
        }
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "ids made one after another sort in that order");
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "no id repeats");
    }

    #[test]
    fn an_id_carries_its_creation_time() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
        let id = new_session_id();
        let created = created_ms(&id).unwrap();
        assert!(
            created >= before && created < before + 60_000,
            "{created} vs {before}"
        );
        assert_eq!(encode(0, 0), "0".repeat(26));
        assert_eq!(
            created_ms(&format!("ses_{}", encode(1_700_000_000_123, 42))),
            Some(1_700_000_000_123)
        );
        assert_eq!(created_ms("ses_x"), None);
    }

    #[test]
    fn only_the_exact_shape_is_an_id() {
        let good = new_session_id();
        assert!(is_session_id(&good));
        assert!(is_session_id("ses_01jabcdefghjkmnpqrstvwxyz0"));
        for bad in [
            "",
            "ses_",
            "../x",
            "/",
            "ses_../../../../etc/passwd",
            "ses_/0jabcdefghjkmnpqrstvwxyz0",
            "ses_01JABCDEFGHJKMNPQRSTVWXYZ0", // uppercase
            "SES_01jabcdefghjkmnpqrstvwxyz0",
            "ses_01jabcdefghjkmnpqrstvwxyz",   // 25
            "ses_01jabcdefghjkmnpqrstvwxyz00", // 27
            "ses_01jabcdefghjkmnpqrstvwxyzi",  // i is not Crockford
            "ses_01jabcdefghjkmnpqrstvwxyzu",  // nor u
            "ses_81jabcdefghjkmnpqrstvwxyz0",  // past 128 bits
            "xes_01jabcdefghjkmnpqrstvwxyz0",
            " ses_01jabcdefghjkmnpqrstvwxyz0",
            "ses_01jabcdefghjkmnpqrstvwxyz0\n",
            "ses_01jabcdefghjkmnpqrstvwxy.0",
        ] {
            assert!(!is_session_id(bad), "{bad:?} must not pass");
        }
        assert!(!is_session_id(&format!("{good}.jsonl")));
    }
}
