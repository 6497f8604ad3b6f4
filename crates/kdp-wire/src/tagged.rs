//! Tagged fields (KIP-482) that a schema does not name: kept as raw bytes so
//! that a decode and re-encode loses nothing.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One unknown tagged field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedField {
    /// The tag number.
    pub tag: u32,
    /// The field's raw value.
    pub data: Vec<u8>,
}

/// The unknown tagged fields of one struct, ascending by tag with no
/// duplicates (the order the wire requires).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaggedFields(Vec<TaggedField>);

impl TaggedFields {
    /// Builds the set; a later field with the same tag replaces an earlier one.
    pub fn new(mut fields: Vec<TaggedField>) -> Self {
        fields.sort_by_key(|f| f.tag);
        fields.reverse();
        fields.dedup_by_key(|f| f.tag);
        fields.reverse();
        TaggedFields(fields)
    }

    /// For the decoder, which has already checked the order.
    pub(crate) fn from_sorted(fields: Vec<TaggedField>) -> Self {
        TaggedFields(fields)
    }

    /// True when there are no unknown tagged fields (the usual case).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The fields, ascending by tag.
    pub fn iter(&self) -> std::slice::Iter<'_, TaggedField> {
        self.0.iter()
    }

    /// The raw value of field `tag`, if present.
    pub fn get(&self, tag: u32) -> Option<&[u8]> {
        self.0
            .binary_search_by_key(&tag, |f| f.tag)
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|f| f.data.as_slice())
    }

    /// Inserts or replaces a field, keeping the order.
    pub fn insert(&mut self, tag: u32, data: Vec<u8>) {
        match self.0.binary_search_by_key(&tag, |f| f.tag) {
            Ok(i) => {
                if let Some(f) = self.0.get_mut(i) {
                    f.data = data;
                }
            }
            Err(i) => self.0.insert(i, TaggedField { tag, data }),
        }
    }
}

/// JSON form: `[{"Tag": 0, "Data": "hex"}]`, present only when non-empty.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaggedFieldJson {
    #[serde(rename = "Tag")]
    tag: u32,
    #[serde(rename = "Data")]
    data: String,
}

impl Serialize for TaggedFields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|f| TaggedFieldJson {
            tag: f.tag,
            data: crate::hex::encode(&f.data),
        }))
    }
}

impl<'de> Deserialize<'de> for TaggedFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<TaggedFieldJson>::deserialize(d)?;
        let mut fields = Vec::with_capacity(items.len());
        for item in items {
            let data = crate::hex::decode(&item.data).map_err(serde::de::Error::custom)?;
            fields.push(TaggedField {
                tag: item.tag,
                data,
            });
        }
        let n = fields.len();
        let set = TaggedFields::new(fields);
        if set.len() != n {
            return Err(serde::de::Error::custom("duplicate tag"));
        }
        Ok(set)
    }
}
