/// The pages' style sheet and their optional script, served by the collector itself (no CDN, no external font):
/// `Content-Security-Policy: default-src 'self'` allows them and nothing else.
public enum UIAssets: Sendable {
    /// The style sheet: system fonts, tables that scroll sideways inside their box, readable at 400 px wide.
    public static let styleSheet = """
        :root { color-scheme: light dark; --red: #c62828; --amber: #b26a00; --green: #2e7d32; }
        body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 90rem; padding: 0 0.75rem 2rem; \
        line-height: 1.4; }
        header nav { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; padding: 0.5rem 0; \
        border-bottom: 1px solid #8884; }
        nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; margin: 0; padding: 0; }
        nav a[aria-current] { font-weight: bold; }
        h1 { font-size: 1.4rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.15rem; }
        code, pre { font-family: ui-monospace, monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
        pre { white-space: pre-wrap; background: #8881; padding: 0.5rem; }
        .scroll { overflow-x: auto; max-width: 100%; }
        table { border-collapse: collapse; min-width: 100%; }
        caption { text-align: left; font-weight: bold; padding: 0.25rem 0; }
        th, td { border-bottom: 1px solid #8884; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
        td.device, td.reason, .device { overflow-wrap: anywhere; max-width: 20rem; }
        .health { font-weight: bold; white-space: nowrap; }
        .health.red { color: var(--red); }
        .health.amber { color: var(--amber); }
        .health.green { color: var(--green); }
        tr.red { border-left: 4px solid var(--red); }
        tr.amber { border-left: 4px solid var(--amber); }
        .error { color: var(--red); font-weight: bold; }
        dl { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.25rem 1rem; }
        dd { margin: 0; overflow-wrap: anywhere; }
        fieldset { margin: 0 0 0.75rem; }
        label { display: block; margin: 0.25rem 0; }
        input { max-width: 100%; }
        .pager { display: flex; gap: 1rem; padding: 0.5rem 0; }
        @media (max-width: 40rem) { dl { grid-template-columns: 1fr; } }

        """

    /// The optional script: reloads a page that asks for it every minute while the tab is visible, and says so on
    /// the page's root element (`data-refresh`). The pages work the same without it.
    public static let script = """
        "use strict";
        document.documentElement.setAttribute("data-refresh", "every minute");
        setInterval(function () {
          if (document.visibilityState === "visible") { window.location.reload(); }
        }, 60000);

        """
}
