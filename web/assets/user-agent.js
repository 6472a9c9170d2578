// A readable device from a User-Agent header: "Chrome 156 on Linux", "Safari 18 on iOS", "curl 8.5".
// Pure (no DOM), so a unit spec runs it beside this file (user-agent.spec.ts). It names what a person
// needs to tell sessions apart, nothing more: the browser or tool with its major version (curl and
// other tools keep major.minor, their releases are counted that way), and the operating system. A text
// it does not recognise is named by its first product token, and the full text is always one tap away
// on the page, so a wrong guess never hides what was sent.

/**
 * Browsers, most specific first: Edge and Opera say "Chrome" too, Chrome says "Safari".
 * @type {[RegExp, string][]}
 */
const BROWSERS = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\bFxiOS\/(\d+)/, 'Firefox'],
  [/\bCriOS\/(\d+)/, 'Chrome'],
  [/\bHeadlessChrome\/(\d+)/, 'Headless Chrome'],
  [/\bChromium\/(\d+)/, 'Chromium'],
  [/\bChrome\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+(?:\.\d+)?)[^)]*\bSafari\//, 'Safari'],
];

/** Command-line tools and HTTP libraries, named as their authors spell them. @type {[RegExp, string][]} */
const TOOLS = [
  [/^curl\/(\d+\.\d+)/i, 'curl'],
  [/^Wget\/(\d+\.\d+)/i, 'Wget'],
  [/^PostmanRuntime\/(\d+\.\d+)/, 'Postman'],
  [/^insomnia\/(\d+\.\d+)/i, 'Insomnia'],
  [/^python-requests\/(\d+\.\d+)/, 'Python requests'],
  [/^python-httpx\/(\d+\.\d+)/, 'Python httpx'],
  [/^Python-urllib\/(\d+\.\d+)/, 'Python urllib'],
  [/^aiohttp\/(\d+\.\d+)/i, 'Python aiohttp'],
  [/^Go-http-client\/(\d+\.\d+)/, 'Go'],
  [/^okhttp\/(\d+\.\d+)/i, 'OkHttp'],
  [/^Apache-HttpClient\/(\d+\.\d+)/, 'Apache HttpClient'],
  [/^Java\/(\d+(?:\.\d+)?)/, 'Java'],
  [/^axios\/(\d+\.\d+)/, 'axios'],
  [/^node-fetch\/(\d+\.\d+)/, 'node-fetch'],
  [/^node$/, 'Node.js'],
  [/^undici/, 'Node.js'],
  [/^PowerShell\/(\d+\.\d+)/i, 'PowerShell'],
  [/WindowsPowerShell\/(\d+\.\d+)/, 'PowerShell'],
];

/** Operating systems, most specific first: iPhone and Android texts mention "Mac OS X" and "Linux". @type {[RegExp, string][]} */
const SYSTEMS = [
  [/\b(?:iPhone|iPod)\b/, 'iOS'],
  [/\biPad\b/, 'iPadOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** The longest text looked at: a User-Agent header is bounded by the service, but this stays cheap on any input. */
const MAX_LENGTH = 1024;

/**
 * The device a User-Agent names, in words: "Chrome 156 on Linux", "Firefox 133 on Windows",
 * "curl 8.5"; "Unknown device" for an empty or missing text.
 * @param {string | null | undefined} agent
 * @returns {string}
 */
export function describeUserAgent(agent) {
  const text = typeof agent === 'string' ? agent.slice(0, MAX_LENGTH).trim() : '';
  if (!text) return 'Unknown device';
  for (const [pattern, name] of TOOLS) {
    const match = pattern.exec(text);
    if (match) return match[1] ? `${name} ${match[1]}` : name;
  }
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1];
  for (const [pattern, name] of BROWSERS) {
    const match = pattern.exec(text);
    if (match) return system ? `${name} ${match[1]} on ${system}` : `${name} ${match[1]}`;
  }
  // Not a browser or tool we know: its first product token ("MyBank-Exporter/2.1" → "MyBank-Exporter 2.1").
  const first = /^([A-Za-z][\w.+-]{0,40})(?:\/([\w.]{1,20}))?/.exec(text);
  const product = first && first[1] !== 'Mozilla' ? (first[2] ? `${first[1]} ${first[2]}` : first[1]) : 'Unknown browser';
  return system ? `${product} on ${system}` : product;
}
