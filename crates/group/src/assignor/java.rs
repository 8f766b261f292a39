//! The few pieces of Java's runtime behaviour the assignors' results depend on, reproduced so that
//! our leader computes what a Java leader computes: `String.compareTo` (UTF-16 code units, not
//! UTF-8 bytes), the members' ordering of `AbstractPartitionAssignor.MemberInfo`, and the
//! iteration order of `java.util.HashMap` / `HashSet` where the Java assignors iterate one and the
//! order changes the outcome (the sticky assignors do, in a few places).
//!
//! The hash-order emulation follows OpenJDK's `HashMap` (8 and later): table capacity 16 doubling
//! past a load factor of 0.75, bucket `(h ^ (h >>> 16)) & (capacity - 1)`, entries of a bucket in
//! insertion order (a resize splits a bucket keeping that order). Not reproduced: tree bins, which
//! need 9 keys colliding in one bucket of a 64-slot table, far beyond a consumer group's size.

use std::cmp::Ordering;

/// `String.compareTo`: lexicographic over UTF-16 code units.
pub(crate) fn cmp_str(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `String.hashCode`.
pub(crate) fn string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `TopicPartition.hashCode`.
pub(crate) fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_add(partition)
        .wrapping_mul(31)
        .wrapping_add(string_hash(topic))
}

/// The bucket of `hash` in a table of `capacity` slots (a power of two).
pub(crate) fn bucket(hash: i32, capacity: usize) -> usize {
    // Reinterpret the bits as Java's `>>>` does.
    let h = u32::from_ne_bytes(hash.to_ne_bytes());
    (h ^ (h >> 16)) as usize & (capacity - 1)
}

/// The capacity a `HashMap` built with `new HashMap<>()` has after holding `len` entries.
pub(crate) fn grown_capacity(capacity: usize, len: usize) -> usize {
    let mut cap = capacity;
    while len > cap / 4 * 3 {
        cap *= 2;
    }
    cap
}

/// The default initial capacity of `new HashMap<>()`.
pub(crate) const DEFAULT_CAPACITY: usize = 16;

/// The iteration order of a `new HashMap<String, _>()` into which `keys` were put in the order
/// given (each key once): by bucket, then by insertion.
pub(crate) fn hash_map_order<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    let cap = grown_capacity(DEFAULT_CAPACITY, keys.len());
    let mut order: Vec<(usize, usize, &'a str)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (bucket(string_hash(k), cap), i, *k))
        .collect();
    order.sort_unstable_by_key(|&(b, i, _)| (b, i));
    order.into_iter().map(|(_, _, k)| k).collect()
}

/// The members' order of Java's `MemberInfo.compareTo`: static members (with a
/// `group.instance.id`) first, by instance id, then dynamic members by member id. We break the
/// tie between two members with the same instance id (which the coordinator never lets happen)
/// by member id.
pub(crate) fn cmp_member(
    a_id: &str,
    a_instance: Option<&str>,
    b_id: &str,
    b_instance: Option<&str>,
) -> Ordering {
    let by_instance = match (a_instance, b_instance) {
        (Some(a), Some(b)) => cmp_str(a, b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    by_instance.then_with(|| cmp_str(a_id, b_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values from `"…".hashCode()` on a JVM.
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("hello"), 99_162_322);
        assert_eq!(string_hash("consumer-1"), -166_239_206);
        // Surrogate pairs hash as two code units.
        assert_eq!(string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn compare_is_utf16() {
        // U+1F600 is the surrogate pair D83D DE00 in UTF-16, below U+FF61; in UTF-8 it is above.
        assert_eq!(cmp_str("\u{FF61}", "\u{1F600}"), Ordering::Greater);
        assert_eq!("\u{FF61}".cmp("\u{1F600}"), Ordering::Less);
        assert_eq!(cmp_str("a", "b"), Ordering::Less);
        assert_eq!(cmp_str("ab", "a"), Ordering::Greater);
    }

    #[test]
    fn capacity_grows_past_three_quarters() {
        assert_eq!(grown_capacity(16, 12), 16);
        assert_eq!(grown_capacity(16, 13), 32);
        assert_eq!(grown_capacity(16, 25), 64);
    }

    #[test]
    fn hash_map_order_is_bucket_then_insertion() {
        // "C0" hashes to 2125 (bucket 13 of 16), "D" to 68 (bucket 4).
        assert_eq!(hash_map_order(&["C0", "D"]), ["D", "C0"]);
        // "Aa" and "BB" collide (2112): insertion order decides.
        assert_eq!(hash_map_order(&["BB", "Aa"]), ["BB", "Aa"]);
        assert_eq!(hash_map_order(&["Aa", "BB"]), ["Aa", "BB"]);
    }

    #[test]
    fn static_members_sort_first() {
        assert_eq!(cmp_member("a", None, "b", Some("z")), Ordering::Greater);
        assert_eq!(cmp_member("b", Some("x"), "a", Some("y")), Ordering::Less);
        assert_eq!(cmp_member("a", None, "b", None), Ordering::Less);
    }
}
