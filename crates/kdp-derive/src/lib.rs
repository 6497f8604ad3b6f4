//! `#[kafka(...)]`: a Kafka message declared once.
//!
//! Written on a struct inside `kdp-wire` whose fields carry the facts of
//! Kafka's JSON schema (names, version ranges, nullable versions, defaults),
//! it emits everything else from that one declaration:
//!
//! - the struct, deriving `Debug`, `Clone`, `PartialEq`, `Eq` and serde with
//!   the schema's PascalCase names (strict: unknown fields are errors, and a
//!   missing field is one unless the schema gives it a default);
//! - `Default`, with the schema defaults;
//! - `crate::wire::Wire`: smallest size (to bound counts before allocating),
//!   exact size, an infallible encoder and a strict decoder whose errors name
//!   the field;
//! - a view, `NameView<'a>`, and `crate::view::Viewable`: a check that
//!   validates the struct without allocating, step for step as the
//!   decoder reads it (so with its errors), and then accessors, one per
//!   field, that read the validated bytes in place (`&str` for strings,
//!   `crate::view::ArrayView` for arrays, the declared default for a field
//!   absent from the version), `tagged_fields()` for the raw tag section
//!   and `into_owned()`;
//! - `crate::testgen::Random`, values valid for a version, for property tests;
//! - with `key = ...`: `crate::message::Message`, and `crate::message::Request`
//!   with `response = Type`;
//! - with `record = ...`: `crate::coordinator::CoordinatorRecord`, for the
//!   records Kafka's coordinators keep in their internal topics (each key
//!   and value starts with its own int16 version and has its own flexible
//!   versions, outside any API).
//!
//! Struct arguments: `key = crate::api::X` (the API key constant), `versions =
//! "0-4"`, `response = Type`, `custom_codec` (the `Message` impl calls a
//! hand-tuned `crate::wire::CustomCodec` instead of the declared codec, which
//! stays available through `Wire` for cross-checks); or `record = "0-1"` (the
//! record's valid versions) with `flexible = "1+"` or `flexible = "none"`.
//!
//! Field arguments: `versions = "3+"` (absent elsewhere: not on the wire, the
//! default in memory), `nullable = "10+"` (an `Option` field that may be null
//! only there; without it an `Option` field is nullable wherever it exists),
//! `default = "-1"` (the schema default, a Rust expression), `name = "X"` (when
//! the schema name is not the PascalCase of the field), `tag = N` (a tagged
//! field: it travels in the tagged-field section of the flexible versions in
//! `versions`, which are then the schema's `taggedVersions`, and only when it
//! differs from its `default`, as Kafka writes it). A field named
//! `unknown_tagged_fields` is the tagged-field section of flexible versions:
//! the tags no field declares, kept raw; a declared tag that arrives holding
//! its default value stays there too, so that what decodes re-encodes byte
//! for byte.
//! `Vec<u8>` and `Option<Vec<u8>>` are Kafka `bytes`.
//!
//! Version ranges use the schema's syntax: `N`, `N+`, `N-M`.

#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields, GenericArgument, LitStr, Path, PathArguments, Type};

mod spec;
mod view;

use spec::{codec_path, gate, Codec, FieldSpec, Range};

/// See the crate documentation.
#[proc_macro_attribute]
pub fn kafka(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct StructArgs {
    key: Option<Expr>,
    versions: Option<Range>,
    response: Option<Path>,
    custom_codec: bool,
    /// A coordinator record's versions and flexible versions (`None`: none).
    record: Option<(Range, Option<Range>)>,
}

fn parse_struct_args(attr: TokenStream2) -> syn::Result<StructArgs> {
    let mut args = StructArgs::default();
    let mut record: Option<Range> = None;
    let mut flexible: Option<Option<Range>> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("key") {
            args.key = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("versions") {
            args.versions = Some(Range::parse(&meta.value()?.parse()?)?);
        } else if meta.path.is_ident("response") {
            args.response = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("custom_codec") {
            args.custom_codec = true;
        } else if meta.path.is_ident("record") {
            record = Some(Range::parse(&meta.value()?.parse()?)?);
        } else if meta.path.is_ident("flexible") {
            let lit: LitStr = meta.value()?.parse()?;
            flexible = Some(if lit.value().trim() == "none" {
                None
            } else {
                Some(Range::parse(&lit)?)
            });
        } else {
            return Err(
                meta.error("expected key, versions, response, custom_codec, record or flexible")
            );
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    match (record, flexible) {
        (Some(versions), Some(flexible)) => {
            if args.key.is_some() || args.versions.is_some() {
                return Err(syn::Error::new(
                    proc_macro2::Span::call_site(),
                    "a coordinator record has `record` and `flexible`, not `key` and `versions`",
                ));
            }
            args.record = Some((versions, flexible));
        }
        (None, None) => {}
        _ => return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "a coordinator record needs both `record = \"N-M\"` and `flexible = \"N+\"|\"none\"`",
        )),
    }
    if args.key.is_some() != args.versions.is_some() {
        return Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "a message needs both `key` and `versions`; a nested struct neither",
        ));
    }
    Ok(args)
}

fn pascal_case(ident: &str) -> String {
    ident
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The single generic argument of `Outer<T>`, if `ty` is that.
fn generic_of<'a>(ty: &'a Type, outer: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != outer {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

fn is_ident_type(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident(name))
}

fn is_bytes(ty: &Type) -> bool {
    generic_of(ty, "Vec").is_some_and(|t| is_ident_type(t, "u8"))
}

fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let args = parse_struct_args(attr)?;
    let mut st: DeriveInput = syn::parse2(item)?;
    let span = st.span();
    let Data::Struct(data) = &mut st.data else {
        return Err(syn::Error::new(span, "#[kafka] is for structs"));
    };
    let Fields::Named(named) = &mut data.fields else {
        return Err(syn::Error::new(span, "#[kafka] needs named fields"));
    };

    let mut fields = Vec::new();
    let mut has_tags = false;
    for f in named.named.iter_mut() {
        let ident = f
            .ident
            .clone()
            .ok_or_else(|| syn::Error::new(f.span(), "unnamed field"))?;
        let mut spec = FieldSpec {
            wire_name: pascal_case(&ident.to_string()),
            ident,
            ty: f.ty.clone(),
            versions: Range::ALL,
            nullable: None,
            default: None,
            codec: Codec::Plain,
            is_option: generic_of(&f.ty, "Option").is_some(),
            tag: None,
            docs: f
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc"))
                .cloned()
                .collect(),
        };
        let mut rename = false;
        let mut kept = Vec::new();
        for a in f.attrs.drain(..) {
            if !a.path().is_ident("kafka") {
                kept.push(a);
                continue;
            }
            a.parse_nested_meta(|meta| {
                if meta.path.is_ident("versions") {
                    spec.versions = Range::parse(&meta.value()?.parse()?)?;
                } else if meta.path.is_ident("nullable") {
                    spec.nullable = Some(Range::parse(&meta.value()?.parse()?)?);
                } else if meta.path.is_ident("default") {
                    let lit: LitStr = meta.value()?.parse()?;
                    spec.default = Some(lit.value().parse().map_err(|_| {
                        syn::Error::new(lit.span(), "default: not a Rust expression")
                    })?);
                } else if meta.path.is_ident("name") {
                    let lit: LitStr = meta.value()?.parse()?;
                    spec.wire_name = lit.value();
                    rename = true;
                } else if meta.path.is_ident("tag") {
                    let lit: syn::LitInt = meta.value()?.parse()?;
                    spec.tag = Some(lit.base10_parse()?);
                } else {
                    return Err(meta.error("expected versions, nullable, default, name or tag"));
                }
                Ok(())
            })?;
        }
        f.attrs = kept;
        if spec.tag.is_some() && spec.default.is_none() {
            return Err(syn::Error::new(
                f.ty.span(),
                "a tagged field needs its schema `default` (it is written only when it differs)",
            ));
        }
        if spec.nullable.is_some() && !spec.is_option {
            return Err(syn::Error::new(
                f.ty.span(),
                "`nullable` is for Option fields",
            ));
        }
        if spec.ident == "unknown_tagged_fields" {
            has_tags = true;
            f.attrs.push(syn::parse_quote! {
                #[serde(default, skip_serializing_if = "crate::tagged::TaggedFields::is_empty")]
            });
            continue;
        }
        if is_bytes(&f.ty) || generic_of(&f.ty, "Option").is_some_and(is_bytes) {
            spec.codec = Codec::Bytes;
        }
        if rename {
            let name = &spec.wire_name;
            f.attrs.push(syn::parse_quote! { #[serde(rename = #name)] });
        }
        fields.push(spec);
    }
    if !has_tags {
        return Err(syn::Error::new(
            st.ident.span(),
            "#[kafka] structs need `unknown_tagged_fields: TaggedFields` (the flexible versions' tag section)",
        ));
    }

    let name = &st.ident;
    let name_str = name.to_string();

    // serde defaults: a named function per field that has a schema default.
    let mut default_fns = Vec::new();
    if let Data::Struct(syn::DataStruct {
        fields: Fields::Named(named),
        ..
    }) = &mut st.data
    {
        for (f, spec) in named
            .named
            .iter_mut()
            .filter(|f| {
                f.ident
                    .as_ref()
                    .is_some_and(|i| i != "unknown_tagged_fields")
            })
            .zip(&fields)
        {
            let Some(expr) = &spec.default else { continue };
            let fn_name = format_ident!("__kdp_default_{}_{}", name, spec.ident);
            let fn_str = fn_name.to_string();
            let ty = &spec.ty;
            default_fns.push(quote! {
                #[doc(hidden)]
                #[allow(non_snake_case)]
                fn #fn_name() -> #ty { #expr }
            });
            f.attrs
                .push(syn::parse_quote! { #[serde(default = #fn_str)] });
        }
    }

    st.attrs.push(syn::parse_quote! {
        #[derive(Debug, Clone, PartialEq, Eq, ::serde::Serialize, ::serde::Deserialize)]
    });
    st.attrs.push(syn::parse_quote! {
        #[serde(rename_all = "PascalCase", deny_unknown_fields)]
    });

    let mut min_len = Vec::new();
    let mut wire_len = Vec::new();
    let mut put = Vec::new();
    let mut read = Vec::new();
    let mut random = Vec::new();
    let mut defaults = Vec::new();
    // Tagged fields, ascending by tag: their size, writer and reader arms.
    let mut tagged_sorted: Vec<&FieldSpec> = fields.iter().filter(|f| f.tag.is_some()).collect();
    tagged_sorted.sort_by_key(|f| f.tag);
    if let Some(w) = tagged_sorted.windows(2).find(|w| w[0].tag == w[1].tag) {
        return Err(syn::Error::new(
            w[1].ident.span(),
            "two fields have the same tag",
        ));
    }
    let mut tagged_len = Vec::new();
    let mut tagged_put = Vec::new();
    let mut tagged_read = Vec::new();
    for spec in &tagged_sorted {
        let ident = &spec.ident;
        let c = codec_path(spec);
        let wire_name = &spec.wire_name;
        let tag = spec.tag.unwrap_or_default();
        let default = spec.default.clone().unwrap_or_default();
        let here = spec.versions.condition().unwrap_or_else(|| quote! { true });
        tagged_len.push(quote! {
            (#tag, if (#here) && self.#ident != (#default) {
                ::core::option::Option::Some(#c::wire_len(&self.#ident, v))
            } else {
                ::core::option::Option::None
            })
        });
        tagged_put.push(quote! { #tag => #c::put(&self.#ident, buf, v), });
        tagged_read.push(quote! {
            #tag if #here => {
                let value = #c::read(sub, v).field(#wire_name)?;
                if value == (#default) {
                    // Kafka never writes a default; keep such bytes raw so
                    // that the re-encoding is the same.
                    ::core::result::Result::Ok(false)
                } else {
                    #ident = value;
                    ::core::result::Result::Ok(true)
                }
            }
        });
    }
    for spec in &fields {
        let ident = &spec.ident;
        let c = codec_path(spec);
        let wire_name = &spec.wire_name;
        let default = spec
            .default
            .clone()
            .unwrap_or_else(|| quote! { ::core::default::Default::default() });
        defaults.push(quote! { #ident: #default });
        if spec.tag.is_some() {
            read.push(quote! { let mut #ident = #default; });
            let here = spec.versions.condition().unwrap_or_else(|| quote! { true });
            random.push(quote! {
                #ident: if v.flexible && (#here) { #c::random(g, v, false) } else { #default }
            });
            continue;
        }
        min_len.push(gate(spec, quote! { #c::min_len(v) }, quote! { 0 }));
        wire_len.push(gate(
            spec,
            quote! { #c::wire_len(&self.#ident, v) },
            quote! { 0 },
        ));
        put.push(gate(
            spec,
            quote! { #c::put(&self.#ident, buf, v); },
            quote! {},
        ));
        let read_one = match spec.nullable.and_then(Range::condition) {
            // Null only where the schema allows it; the error points at the
            // length prefix.
            Some(cond) => quote! {
                {
                    let start = r.offset();
                    let value = #c::read(r, v).field(#wire_name)?;
                    if value.is_none() && !(#cond) {
                        return ::core::result::Result::Err(
                            crate::error::DecodeError::new(
                                start,
                                crate::error::DecodeErrorKind::UnexpectedNull { what: #c::WHAT },
                            )
                            .in_field(#wire_name),
                        );
                    }
                    value
                }
            },
            None => quote! { #c::read(r, v).field(#wire_name)? },
        };
        let read_expr = gate(spec, read_one, default.clone());
        read.push(quote! { let #ident = #read_expr; });
        let nullable_here = match (spec.is_option, spec.nullable.and_then(Range::condition)) {
            (false, _) => quote! { false },
            (true, None) => quote! { true },
            (true, Some(cond)) => cond,
        };
        let random_expr = gate(spec, quote! { #c::random(g, v, #nullable_here) }, default);
        random.push(quote! { #ident: #random_expr });
    }
    let idents: Vec<_> = fields.iter().map(|f| &f.ident).collect();
    // The tag section: plain when no field is tagged (the common, fast case).
    let (section_len, section_put, section_read) = if tagged_sorted.is_empty() {
        (
            quote! { crate::codec::tagged_fields_len(&self.unknown_tagged_fields) },
            quote! { buf.put_tagged_fields(&self.unknown_tagged_fields); },
            quote! { r.tagged_fields()? },
        )
    } else {
        (
            quote! {
                crate::codec::tagged_section_len(&self.unknown_tagged_fields, &[#(#tagged_len),*])
            },
            quote! {
                crate::codec::put_tagged_section(
                    buf,
                    &self.unknown_tagged_fields,
                    &[#(#tagged_len),*],
                    |buf, tag| match tag {
                        #(#tagged_put)*
                        _ => {}
                    },
                );
            },
            quote! {
                r.tagged_fields_known(|tag, sub| match tag {
                    #(#tagged_read)*
                    _ => ::core::result::Result::Ok(false),
                })?
            },
        )
    };

    let mut out = quote! {
        #st

        #(#default_fns)*

        impl ::core::default::Default for #name {
            /// The schema defaults.
            fn default() -> Self {
                #name {
                    #(#defaults,)*
                    unknown_tagged_fields: ::core::default::Default::default(),
                }
            }
        }

        impl crate::wire::Wire for #name {
            #[inline]
            fn min_len(v: crate::wire::Version) -> usize {
                0 #( + #min_len )* + usize::from(v.flexible)
            }

            #[inline]
            fn wire_len(&self, v: crate::wire::Version) -> usize {
                0 #( + #wire_len )*
                    + if v.flexible { #section_len } else { 0 }
            }

            #[inline]
            fn put<B: ::bytes::BufMut>(&self, buf: &mut B, v: crate::wire::Version) {
                use crate::codec::PutWire as _;
                #(#put)*
                if v.flexible {
                    #section_put
                }
            }

            fn read(
                r: &mut crate::codec::Reader<'_>,
                v: crate::wire::Version,
            ) -> ::core::result::Result<Self, crate::error::DecodeError> {
                use crate::error::Context as _;
                #(#read)*
                let unknown_tagged_fields = if v.flexible {
                    #section_read
                } else {
                    ::core::default::Default::default()
                };
                ::core::result::Result::Ok(#name {
                    #(#idents,)*
                    unknown_tagged_fields,
                })
            }
        }

        impl crate::testgen::Random for #name {
            fn random(g: &mut crate::testgen::Gen, v: crate::wire::Version, _nullable: bool) -> Self {
                #name {
                    #(#random,)*
                    unknown_tagged_fields: ::core::default::Default::default(),
                }
            }
        }
    };

    out.extend(view::expand(&st, &fields, &tagged_sorted));

    if let (Some(key), Some(versions)) = (&args.key, args.versions) {
        let Range { lo, hi } = versions;
        let (len, enc, dec) = if args.custom_codec {
            (
                quote! { crate::wire::CustomCodec::custom_len(self, version) },
                quote! { crate::wire::CustomCodec::custom_put(self, buf, version) },
                quote! { crate::wire::CustomCodec::custom_read(r, version) },
            )
        } else {
            (
                quote! { crate::wire::Wire::wire_len(self, crate::wire::Version::of::<Self>(version)) },
                quote! { crate::wire::Wire::put(self, buf, crate::wire::Version::of::<Self>(version)) },
                quote! { crate::wire::Wire::read(r, crate::wire::Version::of::<Self>(version)) },
            )
        };
        // A hand-tuned codec may also check a whole body in its usual shape
        // faster than the declared check (which still names every error).
        let accepts_fast = if args.custom_codec {
            quote! {
                #[inline]
                fn accepts_fast(body: &[u8], version: i16) -> bool {
                    <Self as crate::wire::CustomCodec>::custom_accepts(body, version)
                }
            }
        } else {
            quote! {}
        };
        let throttle = if fields.iter().any(|f| f.ident == "throttle_time_ms") {
            quote! {
                fn throttle_time_ms(&self) -> i32 {
                    self.throttle_time_ms
                }
            }
        } else {
            quote! {}
        };
        out.extend(quote! {
            impl crate::message::Message for #name {
                const NAME: &'static str = #name_str;
                #throttle
                const API_KEY: i16 = #key;
                const LOWEST_VERSION: i16 = #lo;
                const HIGHEST_VERSION: i16 = #hi;

                #[inline]
                fn encoded_len(&self, version: i16) -> usize {
                    #len
                }

                #[inline]
                fn encode<B: ::bytes::BufMut>(&self, buf: &mut B, version: i16) {
                    #enc
                }

                fn decode(
                    r: &mut crate::codec::Reader<'_>,
                    version: i16,
                ) -> ::core::result::Result<Self, crate::error::DecodeError> {
                    <Self as crate::message::Message>::check_version(r, version)?;
                    #dec
                }

                #accepts_fast
            }
        });
        if let Some(resp) = &args.response {
            out.extend(quote! {
                impl crate::message::Request for #name {
                    type Response = #resp;
                }
            });
        }
    } else if let Some((versions, flexible)) = args.record {
        let Range { lo, hi } = versions;
        let flexible = match flexible {
            None => quote! { false },
            Some(f) => {
                let Range { lo, hi } = f;
                quote! { (#lo..=#hi).contains(&version) }
            }
        };
        out.extend(quote! {
            impl crate::coordinator::CoordinatorRecord for #name {
                const NAME: &'static str = #name_str;
                const LOWEST_VERSION: i16 = #lo;
                const HIGHEST_VERSION: i16 = #hi;

                #[inline]
                fn is_flexible(version: i16) -> bool {
                    #flexible
                }
            }
        });
        if args.response.is_some() || args.custom_codec {
            return Err(syn::Error::new(
                st.ident.span(),
                "`response` and `custom_codec` are for API messages, not records",
            ));
        }
    } else if args.response.is_some() || args.custom_codec {
        return Err(syn::Error::new(
            st.ident.span(),
            "`response` and `custom_codec` need `key` and `versions`",
        ));
    }
    Ok(out)
}
