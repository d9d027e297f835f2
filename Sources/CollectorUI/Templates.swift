/// The mustache templates of the pages (hummingbird-project/swift-mustache). Every `{{value}}` is HTML-escaped by
/// the engine (`<`, `>`, `&`, `"`, `'`); no template uses the unescaped `{{{value}}}` or `{{& value}}` forms
/// (a test checks it). Styles and the optional script are separate files of the collector's own, as
/// `Content-Security-Policy: default-src 'self'` requires.
enum Templates {
    /// Every template by name.
    static let all: [String: String] = [
        "header": header, "footer": footer, "fleet": fleet, "log": log, "proof": proof, "witnesses": witnesses,
        "signIn": signIn, "problem": problem,
    ]

    static let header = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · audit collector</title>
        <link rel="stylesheet" href="/ui/assets/style.css">
        {{#refresh}}<script src="/ui/assets/refresh.js" defer></script>{{/refresh}}
        </head>
        <body>
        <header>
        <nav aria-label="Pages"><ul>
        {{#nav.links}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav.links}}
        </ul>
        {{#nav.signOut}}<form method="post" action="{{nav.signOutHref}}"><button type="submit">Sign out</button></form>\
        {{/nav.signOut}}
        </nav>
        </header>
        <main>

        """

    static let footer = """
        </main>
        <footer><p>Read-only pages of the audit collector. Every page has a JSON twin: add <code>.json</code> to its \
        path or ask for <code>application/json</code>.</p></footer>
        </body>
        </html>

        """

    static let fleet = """
        {{> header}}
        <h1>Fleet</h1>
        <p id="summary">{{summary}} · <a href="{{jsonHref}}">JSON</a></p>
        <nav aria-label="Filter by state"><ul class="states">
        {{#states}}<li><a href="{{href}}"{{#current}} aria-current="true"{{/current}}>{{label}} ({{count}})</a></li>\
        {{/states}}
        </ul></nav>
        <div class="scroll">
        <table id="fleet">
        <caption>Device logs, {{pageText}}</caption>
        <thead><tr>
        {{#columns}}<th scope="col" aria-sort="{{ariaSort}}">{{#href}}<a href="{{.}}">{{label}}</a>{{/href}}\
        {{^href}}{{label}}{{/href}}</th>{{/columns}}
        </tr></thead>
        <tbody>
        {{#rows}}<tr class="{{colour}}">
        <td><span class="health {{colour}}">{{health}}</span></td>
        <th scope="row"><a href="{{logHref}}" title="{{logId}}"><code>{{logShort}}</code></a></th>
        <td class="device">{{deviceId}}</td><td>{{head}}</td><td>{{size}}</td><td>{{lastIngest}}</td><td>{{lag}}</td>
        <td>{{incidents}}</td><td>{{gaps}}</td><td>{{witnessed}}</td><td>{{epoch}}</td>
        </tr>
        {{/rows}}
        {{#empty}}<tr><td colspan="11">No log matches.</td></tr>{{/empty}}
        </tbody>
        </table>
        </div>
        <nav aria-label="Pages of the fleet" class="pager">
        {{#previousHref}}<a rel="prev" href="{{.}}">Previous</a>{{/previousHref}}
        <span>{{pageText}}</span>
        {{#nextHref}}<a rel="next" href="{{.}}">Next</a>{{/nextHref}}
        </nav>
        {{> footer}}
        """

    static let log = """
        {{> header}}
        <h1>Log <code>{{logId}}</code></h1>
        <p>Device <strong class="device">{{deviceId}}</strong> · <span class="health {{colour}}">{{health}}</span> · \
        <a href="{{jsonHref}}">JSON</a> · <a href="{{proofHref}}">Proofs</a></p>
        <section aria-labelledby="head-title">
        <h2 id="head-title">Head</h2>
        <dl>
        {{#facts}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/facts}}
        </dl>
        </section>
        <section aria-labelledby="checkpoint-title">
        <h2 id="checkpoint-title">Signed checkpoint</h2>
        {{#checkpoint}}<pre id="checkpoint">{{.}}</pre>{{/checkpoint}}
        {{^checkpoint}}<p>The collector's tree of this log is empty.</p>{{/checkpoint}}
        </section>
        <section aria-labelledby="entries-title">
        <h2 id="entries-title">Latest entries</h2>
        <div class="scroll"><table id="entries">
        <caption>The latest {{entryCount}} entries held, newest first (payloads stay sealed)</caption>
        <thead><tr><th scope="col">Seq</th><th scope="col">Kind</th><th scope="col">Sealed at</th>\
        <th scope="col">Size</th><th scope="col">Entry hash</th></tr></thead>
        <tbody>
        {{#entries}}<tr><th scope="row">{{seq}}</th><td>{{kind}}</td><td>{{sealedAt}}</td><td>{{size}}</td>\
        <td><code>{{entryHash}}</code></td></tr>
        {{/entries}}
        </tbody></table></div>
        </section>
        <section aria-labelledby="removals-title">
        <h2 id="removals-title">Removal records</h2>
        <div class="scroll"><table id="removals">
        <caption>Records that account for removed entries, newest first</caption>
        <thead><tr><th scope="col">Record seq</th><th scope="col">Removed</th><th scope="col">Count</th>\
        <th scope="col">Reason</th></tr></thead>
        <tbody>
        {{#removals}}<tr><th scope="row">{{recordSeq}}</th><td>{{range}}</td><td>{{count}}</td>\
        <td class="reason">{{reason}}</td></tr>
        {{/removals}}
        {{^removals}}<tr><td colspan="4">None.</td></tr>{{/removals}}
        </tbody></table></div>
        </section>
        <section aria-labelledby="incidents-title">
        <h2 id="incidents-title">Incidents</h2>
        <div class="scroll"><table id="incidents">
        <caption>Entries refused and kept as evidence</caption>
        <thead><tr><th scope="col">Seq</th><th scope="col">Kind</th><th scope="col">Reason</th>\
        <th scope="col">Refused entry hash</th><th scope="col">Evidence</th></tr></thead>
        <tbody>
        {{#incidents}}<tr><th scope="row">{{seq}}</th><td>{{kind}}</td><td class="reason">{{reason}}</td>\
        <td><code>{{entryHash}}</code></td><td><a href="{{evidenceHref}}" download>bundle</a></td></tr>
        {{/incidents}}
        {{^incidents}}<tr><td colspan="5">None.</td></tr>{{/incidents}}
        </tbody></table></div>
        </section>
        {{> footer}}
        """

    static let proof = """
        {{> header}}
        <h1>Proofs</h1>
        <form method="get" action="/ui/proof" class="proof">
        <fieldset><legend>Inclusion of one entry</legend>
        <label>Log id or device id <input name="log" value="{{log}}" required maxlength="256" size="34"></label>
        <label>Seq <input name="seq" value="{{seq}}" inputmode="numeric"></label>
        </fieldset>
        <fieldset><legend>Consistency between two tree sizes</legend>
        <label>From size <input name="from" value="{{from}}" inputmode="numeric"></label>
        <label>To size (empty: the current tree) <input name="to" value="{{to}}" inputmode="numeric"></label>
        </fieldset>
        <button type="submit">Prove</button>
        </form>
        {{#resolvedLog}}<p id="resolved-log">The log of device <q>{{log}}</q>: <code>{{.}}</code></p>{{/resolvedLog}}
        {{#inclusionError}}<p class="error" role="alert" id="inclusion-error">{{.}}</p>{{/inclusionError}}
        {{#inclusion}}<section aria-labelledby="inclusion-title" id="inclusion">
        <h2 id="inclusion-title">Entry {{seq}} is leaf {{leafIndex}} of a tree of {{treeSize}}</h2>
        <p><a href="{{downloadHref}}" download>Download the .tlog-proof file</a> \
        (check it offline with <code>auditctl verify-proof</code>)</p>
        <h3>Inclusion proof</h3>
        <ol>{{#hashes}}<li><code>{{.}}</code></li>{{/hashes}}</ol>
        <h3>Checkpoint</h3>
        <pre>{{checkpoint}}</pre>
        </section>{{/inclusion}}
        {{#consistencyError}}<p class="error" role="alert" id="consistency-error">{{.}}</p>{{/consistencyError}}
        {{#consistency}}<section aria-labelledby="consistency-title" id="consistency">
        <h2 id="consistency-title">Tree size {{from}} is a prefix of tree size {{to}}</h2>
        <ol>{{#hashes}}<li><code>{{.}}</code></li>{{/hashes}}</ol>
        {{^hashes}}<p>Equal sizes: the proof is empty.</p>{{/hashes}}
        </section>{{/consistency}}
        <p><a href="{{jsonHref}}">JSON</a></p>
        {{> footer}}
        """

    static let witnesses = """
        {{> header}}
        <h1>Witnesses</h1>
        <p>Cosigned sizes come from the database; last cosignatures and failures are what this replica saw since it \
        started. <a href="{{jsonHref}}">JSON</a></p>
        <div class="scroll"><table id="witnesses">
        <caption>Configured witnesses</caption>
        <thead><tr><th scope="col">Witness</th><th scope="col">URL</th><th scope="col">Logs cosigned</th>\
        <th scope="col">Largest size</th><th scope="col">Last cosignature</th><th scope="col">Failures</th>\
        <th scope="col">Last failure</th></tr></thead>
        <tbody>
        {{#rows}}<tr><th scope="row">{{name}}<br><code>{{vkey}}</code></th><td><code>{{url}}</code></td>\
        <td>{{logsCosigned}}</td><td>{{largestSize}}</td><td>{{lastCosigned}}</td><td>{{failures}}</td>\
        <td class="reason">{{lastFailure}}</td></tr>
        {{/rows}}
        {{^rows}}<tr><td colspan="7">No witness is configured (auditd collector --witness).</td></tr>{{/rows}}
        </tbody></table></div>
        {{> footer}}
        """

    static let signIn = """
        {{> header}}
        <h1>Sign in</h1>
        {{#error}}<p class="error" role="alert" id="sign-in-error">{{.}}</p>{{/error}}
        <form method="post" action="/ui/sign-in" class="sign-in">
        <label>Read token <input type="password" name="token" autocomplete="current-password" required></label>
        <button type="submit">Sign in</button>
        </form>
        <p>The token is the collector's read token (or its ingest token). The session lasts {{lifetime}}; it lives in \
        this collector process only.</p>
        {{> footer}}
        """

    static let problem = """
        {{> header}}
        <h1>{{heading}}</h1>
        <p class="error" role="alert">{{message}}</p>
        <p><a href="/ui/fleet">Back to the fleet</a></p>
        {{> footer}}
        """
}
