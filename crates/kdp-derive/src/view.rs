//! The view half of `#[kafka]`: from the same field list as the owned
//! codec, a `NameView<'a>` over validated bytes and `crate::view::Viewable`
//! (a check that mirrors the owned reader step for step, so that both fail
//! with the same error; a skip; the view itself).

use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote};
use syn::DeriveInput;

use crate::spec::{codec_marker, codec_path, gate, FieldSpec, Range};

/// `<Marker as crate::view::ViewCodec<T>>` for the field.
fn view_codec(spec: &FieldSpec) -> TokenStream2 {
    codec_marker(spec, quote! { crate::view::ViewCodec })
}

/// The schema default of a field, as an expression.
fn default_of(spec: &FieldSpec) -> TokenStream2 {
    spec.default
        .clone()
        .unwrap_or_else(|| quote! { ::core::default::Default::default() })
}

/// The view struct, its accessors, `into_owned`, `Debug` and `Viewable`.
/// `tagged` lists the tagged fields ascending by tag.
pub(crate) fn expand(
    st: &DeriveInput,
    fields: &[FieldSpec],
    tagged: &[&FieldSpec],
) -> TokenStream2 {
    let name = &st.ident;
    let vis = &st.vis;
    let view_name = format_ident!("{}View", name);
    let view_name_str = view_name.to_string();
    let struct_doc = format!(
        "A validated [`{name}`] read in place, borrowing from its bytes: one \
         accessor per field (see [`crate::view`])."
    );
    let plain: Vec<&FieldSpec> = fields.iter().filter(|f| f.tag.is_none()).collect();

    // Moving a cursor `c` (a local) past field `spec`, in the versions that have it.
    let skip_local = |spec: &FieldSpec| {
        let vc = view_codec(spec);
        gate(spec, quote! { #vc::skip(&mut c, v); }, quote! {})
    };

    let pairs = int32_pairs(&plain);
    let mut accessors = Vec::new();
    let mut debug_fields = Vec::new();
    let mut owned_fields = Vec::new();
    for (k, spec) in plain.iter().enumerate() {
        let ident = &spec.ident;
        let docs = &spec.docs;
        let vc = view_codec(spec);
        let default = default_of(spec);
        // The second of a pair of int32s is read with the first: both
        // accessors load the same eight bytes, which the compiler then
        // loads and byte-swaps once for the two.
        let (first, view) = match pairs.get(k).copied().flatten() {
            Some(0) => (k, quote! { c.i32_pair().0 }),
            Some(_) => (k - 1, quote! { c.i32_pair().1 }),
            None => (k, quote! { #vc::view(&c, v) }),
        };
        let skips: Vec<TokenStream2> = plain.iter().take(first).map(|s| skip_local(s)).collect();
        let read = gate(spec, view, quote! { #vc::absent(&(#default), v) });
        accessors.push(quote! {
            #(#docs)*
            #[inline]
            #[allow(unused_mut)]
            pub fn #ident(&self) -> #vc::View<'a> {
                let v = self.v;
                let mut c = self.c;
                #(#skips)*
                #read
            }
        });
        let wire_name = &spec.wire_name;
        debug_fields.push(quote! { d.field(#wire_name, &self.#ident()); });
        owned_fields.push(quote! { #ident: #vc::owned(self.#ident(), v) });
    }
    let all_skips: Vec<TokenStream2> = plain.iter().map(|s| skip_local(s)).collect();
    for spec in tagged {
        let ident = &spec.ident;
        let docs = &spec.docs;
        let vc = view_codec(spec);
        let default = default_of(spec);
        let tag = spec.tag.unwrap_or_default();
        let here = spec.versions.condition().unwrap_or_else(|| quote! { true });
        accessors.push(quote! {
            #(#docs)*
            pub fn #ident(&self) -> #vc::View<'a> {
                let v = self.v;
                if #here {
                    if let ::core::option::Option::Some(data) = self.tagged_fields().get(#tag) {
                        return #vc::view(&crate::view::Cursor::new(data), v);
                    }
                }
                #vc::absent(&(#default), v)
            }
        });
        let wire_name = &spec.wire_name;
        debug_fields.push(quote! { d.field(#wire_name, &self.#ident()); });
        owned_fields.push(quote! { #ident: #vc::owned(self.#ident(), v) });
    }

    // The owned decoder keeps a declared tag raw when it holds the default.
    let taken_arms: Vec<TokenStream2> = tagged
        .iter()
        .map(|spec| {
            let c = codec_path(spec);
            let default = default_of(spec);
            let tag = spec.tag.unwrap_or_default();
            let here = spec.versions.condition().unwrap_or_else(|| quote! { true });
            quote! {
                #tag if #here => #c::read(&mut crate::codec::Reader::new(data), v)
                    .is_ok_and(|value| value != (#default)),
            }
        })
        .collect();

    let (check_fields, skips_param, trivial) = check_and_skip(&plain);
    // a response's throttle, read through its view (Received::throttle_time_ms)
    let view_throttle = if plain.iter().any(|f| f.ident == "throttle_time_ms") {
        quote! {
            fn view_throttle_time_ms(view: #view_name<'_>) -> i32 {
                view.throttle_time_ms()
            }
        }
    } else {
        quote! {}
    };
    let section_check = section_check(tagged);

    quote! {
        #[doc = #struct_doc]
        #[derive(Clone, Copy)]
        #vis struct #view_name<'a> {
            c: crate::view::Cursor<'a>,
            v: crate::wire::Version,
        }

        impl<'a> #view_name<'a> {
            #(#accessors)*

            /// The tagged-field section, raw: every field, declared or not
            /// (empty outside flexible versions).
            #[allow(unused_mut)]
            pub fn tagged_fields(&self) -> crate::view::TaggedView<'a> {
                let v = self.v;
                if !v.flexible {
                    return crate::view::TaggedView::none();
                }
                let mut c = self.c;
                #(#all_skips)*
                crate::view::TaggedView::at(c)
            }

            /// The owned value, built through the accessors.
            pub fn into_owned(self) -> #name {
                let v = self.v;
                let mut kept = ::std::vec::Vec::new();
                for (tag, data) in self.tagged_fields() {
                    let taken = match tag {
                        #(#taken_arms)*
                        _ => false,
                    };
                    if !taken {
                        kept.push(crate::tagged::TaggedField { tag, data: data.to_vec() });
                    }
                }
                #name {
                    #(#owned_fields,)*
                    unknown_tagged_fields: crate::tagged::TaggedFields::from_sorted(kept),
                }
            }
        }

        impl ::core::fmt::Debug for #view_name<'_> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let mut d = f.debug_struct(#view_name_str);
                #(#debug_fields)*
                let tags = self.tagged_fields();
                if !tags.is_empty() {
                    d.field("tagged_fields", &tags);
                }
                d.finish()
            }
        }

        impl crate::view::Viewable for #name {
            type View<'a> = #view_name<'a>;

            fn check(
                r: &mut crate::codec::Reader<'_>,
                v: crate::wire::Version,
            ) -> ::core::result::Result<bool, crate::error::DecodeError> {
                use crate::error::Context as _;
                #(#check_fields)*
                if v.flexible {
                    #section_check
                }
                ::core::result::Result::Ok(true)
            }

            #[inline]
            fn view<'a>(c: &crate::view::Cursor<'a>, v: crate::wire::Version) -> #view_name<'a> {
                #view_name { c: *c, v }
            }

            #[inline]
            fn skip(c: &mut crate::view::Cursor<'_>, v: crate::wire::Version) {
                #(#skips_param)*
                if v.flexible {
                    c.skip_tagged_fields();
                }
            }

            #view_throttle

            fn absent<'a>(_default: &Self, v: crate::wire::Version) -> #view_name<'a> {
                #view_name { c: crate::view::Cursor::new(&[]), v }
            }

            fn owned(view: #view_name<'_>, _v: crate::wire::Version) -> Self {
                view.into_owned()
            }

            #[inline]
            fn trivial_len(v: crate::wire::Version) -> ::core::option::Option<usize> {
                if v.flexible {
                    ::core::option::Option::None
                } else {
                    <Self as crate::view::Viewable>::trivial_body(v)
                }
            }

            #[inline]
            #[allow(unused_mut)]
            fn trivial_body(v: crate::wire::Version) -> ::core::option::Option<usize> {
                let mut n = 0usize;
                #(#trivial)*
                ::core::option::Option::Some(n)
            }
        }
    }
}

/// For each plain field, its place (0 or 1) in a pair of adjacent `i32`
/// fields that every version has, paired left to right: such a pair is
/// read as one big-endian int64 (one load and one byte swap for both).
fn int32_pairs(plain: &[&FieldSpec]) -> Vec<Option<u8>> {
    let is_i32 = |spec: &FieldSpec| {
        matches!(spec.codec, crate::spec::Codec::Plain)
            && spec.nullable.is_none()
            && spec.versions.condition().is_none()
            && matches!(&spec.ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("i32"))
    };
    let mut pairs = vec![None; plain.len()];
    let mut k = 0;
    while k + 1 < plain.len() {
        if is_i32(plain[k]) && is_i32(plain[k + 1]) {
            pairs[k] = Some(0);
            pairs[k + 1] = Some(1);
            k += 2;
        } else {
            k += 1;
        }
    }
    pairs
}

/// Per field in order: its check (mirroring the owned reader, null checks
/// included), its skip on a `&mut Cursor` named `c`, and its share of the
/// trivial size.
fn check_and_skip(
    plain: &[&FieldSpec],
) -> (Vec<TokenStream2>, Vec<TokenStream2>, Vec<TokenStream2>) {
    let mut checks = Vec::new();
    let mut skips = Vec::new();
    let mut trivial = Vec::new();
    for spec in plain {
        let vc = view_codec(spec);
        let c = codec_path(spec);
        let wire_name = &spec.wire_name;
        let check_one = match spec.nullable.and_then(Range::condition) {
            Some(cond) => quote! {
                let start = r.offset();
                let present = #vc::check(r, v).field(#wire_name)?;
                if !present && !(#cond) {
                    return ::core::result::Result::Err(
                        crate::error::DecodeError::new(
                            start,
                            crate::error::DecodeErrorKind::UnexpectedNull { what: #c::WHAT },
                        )
                        .in_field(#wire_name),
                    );
                }
            },
            None => quote! { #vc::check(r, v).field(#wire_name)?; },
        };
        checks.push(gate(spec, check_one, quote! {}));
        skips.push(gate(spec, quote! { #vc::skip(c, v); }, quote! {}));
        trivial.push(gate(spec, quote! { n += #vc::trivial_len(v)?; }, quote! {}));
    }
    (checks, skips, trivial)
}

/// The tagged-field section's check, as the owned reader reads it: a
/// declared tag is read (with the owned codec: Kafka's tagged fields are
/// numbers) and taken unless it holds its default.
fn section_check(tagged: &[&FieldSpec]) -> TokenStream2 {
    if tagged.is_empty() {
        return quote! { r.check_tagged_fields()?; };
    }
    let arms = tagged.iter().map(|spec| {
        let c = codec_path(spec);
        let default = default_of(spec);
        let tag = spec.tag.unwrap_or_default();
        let here = spec.versions.condition().unwrap_or_else(|| quote! { true });
        let wire_name = &spec.wire_name;
        quote! {
            #tag if #here => {
                let value = #c::read(sub, v).field(#wire_name)?;
                ::core::result::Result::Ok(value != (#default))
            }
        }
    });
    quote! {
        r.check_tagged_fields_known(|tag, sub| match tag {
            #(#arms)*
            _ => ::core::result::Result::Ok(false),
        })?;
    }
}
