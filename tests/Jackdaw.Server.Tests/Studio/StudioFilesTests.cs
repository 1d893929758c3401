using System.Net;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Studio;

/// <summary>
/// Every file the studio serves, read over HTTP as a browser would: pages that load only the
/// studio's own script and style, under a policy that forbids anything else; scripts that reach no
/// other origin and never turn server text into markup.
/// </summary>
public sealed partial class StudioFilesTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private const string Prefix = "Jackdaw.Server.Studio.";

    public static TheoryData<string> Files()
    {
        var data = new TheoryData<string>();
        foreach (var file in FileNames())
        {
            data.Add(file);
        }
        return data;
    }

    private static List<string> FileNames()
    {
        var files = new List<string>();
        foreach (var name in typeof(Jackdaw.Server.Handlers.StudioHandler).Assembly.GetManifestResourceNames().Where(n => n.StartsWith(Prefix, StringComparison.Ordinal)).Order(StringComparer.Ordinal))
        {
            var file = name[Prefix.Length..];
            if (file.EndsWith(".html", StringComparison.Ordinal) || file.EndsWith(".js", StringComparison.Ordinal) || file.EndsWith(".css", StringComparison.Ordinal))
            {
                files.Add(file);
            }
        }
        return files;
    }

    [Fact]
    public void TheStudioHasItsSharedFilesAndPages()
    {
        var files = FileNames().ToHashSet(StringComparer.Ordinal);
        Assert.Contains("studio.js", files);
        Assert.Contains("studio.css", files);
        Assert.Contains("index.html", files);
        foreach (var page in files.Where(f => f.EndsWith(".html", StringComparison.Ordinal)))
        {
            Assert.Contains(page[..^".html".Length] + ".js", files);
        }
    }

    [Theory]
    [MemberData(nameof(Files))]
    public async Task EachFileIsServedUnderThePolicyAndReachesNoOtherOrigin(string file)
    {
        var path = file.EndsWith(".html", StringComparison.Ordinal)
            ? (file == "index.html" ? "/studio/" : "/studio/" + file[..^".html".Length])
            : "/studio/" + file;
        using var response = await server.Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var policy = response.Headers.GetValues("Content-Security-Policy").Single();
        Assert.Contains("default-src 'none'", policy, StringComparison.Ordinal);
        Assert.Contains("script-src 'self';", policy, StringComparison.Ordinal);
        Assert.Contains("connect-src 'self'", policy, StringComparison.Ordinal);
        Assert.Equal("nosniff", response.Headers.GetValues("X-Content-Type-Options").Single());
        var text = await response.Content.ReadAsStringAsync();
        // The only absolute URL a studio file may hold is the SVG namespace, a name never fetched.
        Assert.All(AbsoluteUrl().Matches(text).Select(m => m.Value), url => Assert.Equal("http://www.w3.org/2000/svg", url));

        switch (Path.GetExtension(file))
        {
            case ".html":
                Assert.Equal("text/html", response.Content.Headers.ContentType?.MediaType);
                Assert.StartsWith("<!doctype html>", text, StringComparison.OrdinalIgnoreCase);
                Assert.DoesNotMatch(@"<(iframe|object|embed|img|base|form)\b", text);
                // Scripts come from files of the studio (the policy refuses inline ones anyway).
                Assert.All(ScriptTag().Matches(text), m => Assert.Matches(@"\bsrc=""/studio/[a-z0-9-]+\.js""", m.Value));
                Assert.All(LinkTag().Matches(text), m => Assert.Matches(@"\bhref=""/studio/[a-z0-9-]+\.css""", m.Value));
                Assert.Contains(@"<script src=""/studio/studio.js"" defer></script>", text, StringComparison.Ordinal);
                Assert.Matches(@"<body data-page=""[a-z-]+"">", text);
                break;
            case ".js":
                Assert.Equal("text/javascript", response.Content.Headers.ContentType?.MediaType);
                // Server text goes into pages as text nodes, never parsed as markup.
                Assert.DoesNotMatch(@"\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|\beval\s*\(|new Function\s*\(", text);
                break;
            case ".css":
                Assert.Equal("text/css", response.Content.Headers.ContentType?.MediaType);
                Assert.DoesNotMatch(@"@import|url\(\s*['""]?(?!data:)", text);
                break;
        }
    }

    [Fact]
    public async Task AFileTheStudioDoesNotHaveIsANotFoundInJson()
    {
        using var response = await server.Client.GetAsync("/studio/no-such-page");
        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        var body = await response.Content.ReadAsStringAsync();
        Assert.Contains("\"Type\":\"RouteNotFoundException\"", body, StringComparison.Ordinal);
        Assert.Contains("no-such-page", body, StringComparison.Ordinal);
    }

    [GeneratedRegex(@"https?://[^\s""'`)<>]+")]
    private static partial Regex AbsoluteUrl();

    [GeneratedRegex(@"<script\b[^>]*>")]
    private static partial Regex ScriptTag();

    [GeneratedRegex(@"<link\b[^>]*>")]
    private static partial Regex LinkTag();
}
