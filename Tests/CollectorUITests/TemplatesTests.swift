import Testing

@testable import CollectorUI

/// The templates: no value written unescaped, no inline style or script (the CSP forbids them), and links to the
/// paths the routes serve.
@Suite struct TemplatesTests {
    @Test func noTemplateWritesAValueUnescaped() {
        for (name, template) in Templates.all {
            #expect(!template.contains("{{{"), "template \(name)")
            #expect(!template.contains("{{&"), "template \(name)")
            #expect(!template.contains("<style"), "template \(name): inline styles break the CSP")
            #expect(!template.contains("<script>"), "template \(name): inline scripts break the CSP")
        }
    }

    @Test func theTemplatesLinkThePathsTheRoutesServe() {
        let all = Templates.all.values.joined()
        for path in [UIPaths.style, UIPaths.script, UIPaths.signIn, UIPaths.fleet, UIPaths.proof] {
            #expect(all.contains("\"\(path)\""), "\(path)")
        }
        #expect(UIPaths.json("/ui/fleet?state=behind") == "/ui/fleet.json?state=behind")
        #expect(UIPaths.json(UIPaths.witnesses) == "/ui/witnesses.json")
    }
}
