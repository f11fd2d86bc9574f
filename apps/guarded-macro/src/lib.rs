//! `#[traffic_cop_guarded::guarded]`, placed above a spin-sdk `#[http_component]` handler: the
//! handler becomes the guarded job, and a function of its name, its signature `Request ->
//! Response`, takes the `#[http_component]` and calls it through `traffic_cop_guarded::http`.
//! Anything this cannot wrap is a compile error that says what to change.

use proc_macro::TokenStream;
use proc_macro2::Span;
use quote::{quote, ToTokens};
use syn::{parse_macro_input, spanned::Spanned, Error, ItemFn, Visibility};

#[proc_macro_attribute]
pub fn guarded(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let attribute = proc_macro2::TokenStream::from(attribute);
    let job = parse_macro_input!(item as ItemFn);
    match wrapped(attribute, job) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn wrapped(
    attribute: proc_macro2::TokenStream,
    mut job: ItemFn,
) -> Result<proc_macro2::TokenStream, Error> {
    if !attribute.is_empty() {
        return Err(Error::new(
            attribute.span(),
            "#[guarded] takes no arguments: the lock, schedule and lease are the component's \
             variables",
        ));
    }
    // Attributes expand outermost first, so `#[http_component]` is still here only when it
    // was written below `#[guarded]`; above it, it would have exported the unguarded handler.
    let is_component =
        |a: &syn::Attribute| a.path().segments.last().is_some_and(|s| s.ident == "http_component");
    if !job.attrs.iter().any(is_component) {
        return Err(Error::new(
            Span::call_site(),
            "#[guarded] wraps a spin-sdk HTTP handler: write it directly above #[http_component]",
        ));
    }
    if !job.sig.generics.params.is_empty() || job.sig.inputs.len() != 1 {
        return Err(Error::new(
            job.sig.span(),
            "#[guarded] wraps a handler that takes one `spin_sdk::http::Request` and no generics",
        ));
    }
    let name = job.sig.ident.clone();
    let visibility = std::mem::replace(&mut job.vis, Visibility::Inherited);
    let attributes = std::mem::take(&mut job.attrs);
    let call = if job.sig.asyncness.is_some() {
        name.to_token_stream()
    } else {
        quote!(|request| ::core::future::ready(#name(request)))
    };
    Ok(quote! {
        #(#attributes)*
        #visibility async fn #name(
            request: ::traffic_cop_guarded::Request,
        ) -> ::traffic_cop_guarded::Response {
            #job
            ::traffic_cop_guarded::http(request, #call).await
        }
    })
}
