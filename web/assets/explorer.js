// The API explorer (/swagger/index.html): Swagger UI over this service's OpenAPI document. "Try it
// out" calls the API from this page, so the browser's session cookie goes with each request and the
// browser marks it same-origin (Sec-Fetch-Site), which the CSRF check accepts. A file of its own
// because the Content-Security-Policy allows no inline script.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: '/swagger/v1/swagger.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // No call to the public validator service: nothing leaves this origin.
  validatorUrl: null,
  requestInterceptor: (request) => {
    request.credentials = 'same-origin';
    return request;
  },
});
