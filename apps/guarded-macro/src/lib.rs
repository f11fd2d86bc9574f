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

#[cfg(test)]
mod tests {
    use super::wrapped;
    use quote::quote;
    use syn::parse_quote;

    fn error(attribute: proc_macro2::TokenStream, job: syn::ItemFn) -> String {
        wrapped(attribute, job).expect_err("a compile error").to_string()
    }

    #[test]
    fn a_sync_handler_becomes_the_job_of_an_async_component_function_of_its_name() {
        let job = parse_quote! {
            #[http_component]
            pub fn handle(req: Request) -> anyhow::Result<impl IntoResponse> { todo!() }
        };
        let out = wrapped(quote!(), job).unwrap().to_string();
        let expected = quote! {
            #[http_component]
            pub async fn handle(request: ::traffic_cop_guarded::Request,)
                -> ::traffic_cop_guarded::Response {
                fn handle(req: Request) -> anyhow::Result<impl IntoResponse> { todo!() }
                ::traffic_cop_guarded::http(request, |request| ::core::future::ready(handle(request))).await
            }
        };
        assert_eq!(out, expected.to_string());
    }

    #[test]
    fn an_async_handler_is_awaited_as_it_is() {
        let job = parse_quote! {
            #[spin_sdk::http_component]
            async fn handle(req: Request) -> Response { todo!() }
        };
        let out = wrapped(quote!(), job).unwrap().to_string();
        assert!(out.contains(&quote!(::traffic_cop_guarded::http(request, handle)).to_string()));
    }

    #[test]
    fn the_wrong_order_or_no_http_component_says_where_to_put_the_attribute() {
        let job = parse_quote! { fn handle(req: Request) -> Response { todo!() } };
        assert!(error(quote!(), job).contains("directly above #[http_component]"));
    }

    #[test]
    fn arguments_generics_and_other_signatures_are_refused_with_the_reason() {
        let job: syn::ItemFn = parse_quote! {
            #[http_component]
            fn handle(req: Request) -> Response { todo!() }
        };
        assert!(error(quote!(lock = "x"), job.clone()).contains("takes no arguments"));
        let generic = parse_quote! {
            #[http_component]
            fn handle<T>(req: T) -> Response { todo!() }
        };
        assert!(error(quote!(), generic).contains("one `spin_sdk::http::Request`"));
        let two = parse_quote! {
            #[http_component]
            fn handle(req: IncomingRequest, out: ResponseOutparam) { todo!() }
        };
        assert!(error(quote!(), two).contains("one `spin_sdk::http::Request`"));
    }
}
