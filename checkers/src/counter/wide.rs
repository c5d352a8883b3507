//! How results.json writes a `Sum`: a JSON number when it fits in `i64` (so every figure of
//! an ordinary run reads as before, and `serde_json::Value` can hold it), else a string of
//! its decimal digits, which no JSON reader rounds or rejects.

use crate::ideal::Sum;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Writes `sum`: for `#[serde(with = "wide")]`.
pub fn serialize<S: Serializer>(sum: &Sum, serializer: S) -> Result<S::Ok, S::Error> {
    match i64::try_from(*sum) {
        Ok(n) => serializer.serialize_i64(n),
        Err(_) => serializer.collect_str(sum),
    }
}

/// Reads a sum written as a number or as a string of digits.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Sum, D::Error> {
    deserializer.deserialize_any(SumVisitor)
}

/// A sum that (de)serializes as `serialize` writes it, for sums inside other types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wide(pub Sum);

impl Serialize for Wide {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize(&self.0, serializer)
    }
}

impl<'de> Deserialize<'de> for Wide {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize(deserializer).map(Wide)
    }
}

struct SumVisitor;

impl Visitor<'_> for SumVisitor {
    type Value = Sum;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer, or a string of its decimal digits")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Sum, E> {
        Ok(Sum::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Sum, E> {
        Ok(Sum::from(v))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Sum, E> {
        Ok(v)
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Sum, E> {
        Sum::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Other("a u128"), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Sum, E> {
        v.parse()
            .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_inside_i64_is_a_number_and_one_outside_a_string() {
        let sums = [
            Wide(-2),
            Wide(Sum::from(i64::MIN)),
            Wide(2 * Sum::from(i64::MAX)),
            Wide(Sum::from(i64::MIN) - 1),
        ];
        let text = serde_json::to_string(&sums).expect("serializes");
        assert_eq!(
            text,
            r#"[-2,-9223372036854775808,"18446744073709551614","-9223372036854775809"]"#
        );
        let back: Vec<Wide> = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, sums);
        // serde_json::Value holds every one of them (it cannot hold an integer past u64).
        assert!(serde_json::to_value(sums).is_ok());
        let from_u64: Wide = serde_json::from_str("18446744073709551615").expect("a u64");
        assert_eq!(from_u64, Wide(Sum::from(u64::MAX)));
        assert!(serde_json::from_str::<Wide>(r#""12a""#).is_err());
    }
}
