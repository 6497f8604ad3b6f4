//! What `#[kafka]` reads from a declaration: version ranges and fields,
//! and the pieces of generated code every part of the expansion shares.

use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{LitStr, Type};

#[derive(Clone, Copy)]
pub(crate) struct Range {
    pub(crate) lo: i16,
    pub(crate) hi: i16,
}

impl Range {
    pub(crate) const ALL: Range = Range {
        lo: 0,
        hi: i16::MAX,
    };

    pub(crate) fn parse(lit: &LitStr) -> syn::Result<Range> {
        let text = lit.value();
        let s = text.trim();
        let err = || {
            syn::Error::new(
                lit.span(),
                format!("version range `{s}`: expected `N`, `N+` or `N-M`"),
            )
        };
        let num = |t: &str| t.trim().parse::<i16>().map_err(|_| err());
        let range = if let Some(lo) = s.strip_suffix('+') {
            Range {
                lo: num(lo)?,
                hi: i16::MAX,
            }
        } else if let Some((lo, hi)) = s.split_once('-') {
            Range {
                lo: num(lo)?,
                hi: num(hi)?,
            }
        } else {
            let n = num(s)?;
            Range { lo: n, hi: n }
        };
        if range.lo < 0 || range.lo > range.hi {
            return Err(err());
        }
        Ok(range)
    }

    /// A condition on `v.version`, or `None` when it always holds.
    pub(crate) fn condition(self) -> Option<TokenStream2> {
        let Range { lo, hi } = self;
        match (lo, hi) {
            (0, i16::MAX) => None,
            (lo, i16::MAX) => Some(quote! { v.version >= #lo }),
            (lo, hi) if lo == hi => Some(quote! { v.version == #lo }),
            (lo, hi) => Some(quote! { (#lo..=#hi).contains(&v.version) }),
        }
    }
}

/// How a field goes on the wire.
pub(crate) enum Codec {
    /// Through the type's `Wire` impl.
    Plain,
    /// Kafka `bytes` (`Vec<u8>` or `Option<Vec<u8>>`).
    Bytes,
}

pub(crate) struct FieldSpec {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    pub(crate) wire_name: String,
    pub(crate) versions: Range,
    pub(crate) nullable: Option<Range>,
    pub(crate) default: Option<TokenStream2>,
    pub(crate) codec: Codec,
    pub(crate) is_option: bool,
    /// The tag of a tagged field.
    pub(crate) tag: Option<u32>,
    /// The field's doc comments, for its view accessor.
    pub(crate) docs: Vec<syn::Attribute>,
}

/// The owned codec of a field: `<Marker as crate::wire::Codec<T>>`.
pub(crate) fn codec_path(spec: &FieldSpec) -> TokenStream2 {
    codec_marker(spec, quote! { crate::wire::Codec })
}

/// `<Marker as Trait<T>>` for the field's codec marker (`Plain`, or `Bytes`
/// for Kafka `bytes`).
pub(crate) fn codec_marker(spec: &FieldSpec, codec_trait: TokenStream2) -> TokenStream2 {
    let ty = &spec.ty;
    match spec.codec {
        Codec::Plain => quote! { <crate::wire::Plain as #codec_trait<#ty>> },
        Codec::Bytes => quote! { <crate::wire::Bytes as #codec_trait<#ty>> },
    }
}

/// `then` in the versions that have the field, `otherwise` elsewhere (a
/// condition on a `Version` named `v`).
pub(crate) fn gate(spec: &FieldSpec, then: TokenStream2, otherwise: TokenStream2) -> TokenStream2 {
    match spec.versions.condition() {
        None => then,
        Some(cond) => quote! { if #cond { #then } else { #otherwise } },
    }
}
