using System.Text.RegularExpressions;
using Jackdaw.Server.Routing;

namespace Jackdaw.Server.Tests.Routing;

public class TrieRouterTests
{
    private static readonly TrieRouter<string> Router = new TrieRouter<string>.Builder()
        .Add("/", "GET", "root")
        .Add("/admin/stats", "GET", "stats")
        .Add("/admin/databases", "GET", "list-dbs")
        .Add("/admin/databases", "PUT", "create-db")
        .Add("/admin/databases", "DELETE", "delete-db")
        .Add("/build/version", "GET", "version")
        .Add("/databases/*/docs", "GET", "get-docs")
        .Add("/databases/*/docs", "PUT", "put-doc")
        .Add("/databases/*/docs", "HEAD", "head-doc")
        .Add("/databases/*/docs/stats", "GET", "doc-stats")
        .Add("/databases/*/stats", "GET", "db-stats")
        .Add("/databases/*/indexes/$", "GET", "indexes-rest")
        .Add("/databases/system/special", "GET", "literal-special")
        .Add("/databases/*/special/x", "GET", "star-special")
        .Add("/files/$", "GET", "files")
        .Add("/a/*/*/*/*", "GET", "four")
        .Build();

    private static (string? Handler, string[] Captures) Match(string path, string method = "GET")
    {
        if (!Router.TryMatch(path, out var match))
        {
            return (null, []);
        }
        var captures = new string[match.CaptureCount];
        for (var i = 0; i < captures.Length; i++)
        {
            captures[i] = path[match.GetCapture(i)];
        }
        return (match.Endpoint!.GetHandler(HttpMethodKinds.Parse(method)), captures);
    }

    [Theory]
    [InlineData("/admin/stats", "stats")]
    [InlineData("/admin/databases", "list-dbs")]
    [InlineData("/build/version", "version")]
    [InlineData("/", "root")]
    [InlineData("", "root")]
    public void ExactPathsMatchTheirRoute(string path, string handler) => Assert.Equal(handler, Match(path).Handler);

    [Theory]
    [InlineData("/admin/stat")]
    [InlineData("/admin/statsx")]
    [InlineData("/admin")]
    [InlineData("/admin/")]
    [InlineData("/Admin/stats")]
    [InlineData("/nothing/here")]
    [InlineData("/databases")]
    [InlineData("/databases/db")]
    [InlineData("/databases/db/doc")]
    [InlineData("/databases/db/docsx")]
    [InlineData("/a/1/2/3")]
    [InlineData("/a/1/2/3/4/5")]
    public void NearMissesDoNotMatch(string path) => Assert.False(Router.TryMatch(path, out _));

    [Fact]
    public void StarCapturesOneSegment()
    {
        var (handler, captures) = Match("/databases/Northwind/docs");
        Assert.Equal("get-docs", handler);
        Assert.Equal(["Northwind"], captures);
    }

    [Fact]
    public void CaptureBoundsAreRangesIntoThePath()
    {
        const string path = "/databases/Northwind/docs";
        Assert.True(Router.TryMatch(path, out var match));
        Assert.Equal((11, 9), match.GetCaptureBounds(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => match.GetCapture(1));
    }

    [Fact]
    public void FourCapturesAreKeptInOrder() => Assert.Equal(["1", "22", "333", "4"], Match("/a/1/22/333/4").Captures);

    [Fact]
    public void DollarCapturesTheRestIncludingSlashes()
    {
        var (handler, captures) = Match("/databases/db1/indexes/Orders/ByCompany/stats");
        Assert.Equal("indexes-rest", handler);
        Assert.Equal(["db1", "Orders/ByCompany/stats"], captures);
    }

    [Fact]
    public void DollarMatchesAnEmptyRest() => Assert.Equal(["db1", ""], Match("/databases/db1/indexes/").Captures);

    [Fact]
    public void DollarNeedsItsLiteralPrefix() => Assert.Null(Match("/databases/db1/indexes").Handler);

    [Fact]
    public void OverlappingPrefixesChooseTheLongestLiteral()
    {
        Assert.Equal("get-docs", Match("/databases/db/docs").Handler);
        Assert.Equal("doc-stats", Match("/databases/db/docs/stats").Handler);
        Assert.Equal("db-stats", Match("/databases/db/stats").Handler);
        Assert.False(Router.TryMatch("/databases/db/docs/stat", out _));
    }

    [Fact]
    public void LiteralSegmentIsPreferredOverStar()
    {
        var (handler, captures) = Match("/databases/system/special");
        Assert.Equal("literal-special", handler);
        Assert.Empty(captures);
    }

    [Fact]
    public void FailedLiteralBranchBacktracksToStar()
    {
        // "system" matches the literal branch first, which has no "/special/x": the star branch must take over.
        var (handler, captures) = Match("/databases/system/special/x");
        Assert.Equal("star-special", handler);
        Assert.Equal(["system"], captures);
        Assert.Equal(["system"], Match("/databases/system/docs").Captures);
    }

    [Theory]
    [InlineData("/admin/stats/", "stats")]
    [InlineData("/databases/db/docs/", "get-docs")]
    [InlineData("/build/version/", "version")]
    public void OneTrailingSlashIsTolerated(string path, string handler) => Assert.Equal(handler, Match(path).Handler);

    [Theory]
    [InlineData("/admin/stats//")]
    [InlineData("/databases/db/docs//")]
    public void TwoTrailingSlashesAreNotTolerated(string path) => Assert.False(Router.TryMatch(path, out _));

    [Theory]
    [InlineData("/databases//docs")]
    [InlineData("//admin/stats")]
    [InlineData("/admin//stats")]
    [InlineData("/a/1//3/4")]
    public void EmptySegmentsDoNotMatch(string path) => Assert.False(Router.TryMatch(path, out _));

    [Theory]
    [InlineData("/databases/my%20db/docs", "my%20db")]
    [InlineData("/databases/a%2Fb/docs", "a%2Fb")]
    [InlineData("/databases/caf\u00e9/docs", "caf\u00e9")]
    [InlineData("/databases/\u65e5\u672c\u8a9e/docs", "\u65e5\u672c\u8a9e")]
    [InlineData("/databases/\ud83d\ude00/docs", "\ud83d\ude00")]
    public void PercentEncodedAndNonAsciiSegmentsAreCapturedAsGiven(string path, string capture)
    {
        var (handler, captures) = Match(path);
        Assert.Equal("get-docs", handler);
        Assert.Equal([capture], captures);
    }

    [Theory]
    [InlineData("/adm\u00edn/stats")]
    [InlineData("/\u0100")]
    [InlineData("/admin/stats\uffff")]
    [InlineData("\u0000")]
    public void NonAsciiInLiteralPositionsIsAMiss(string path) => Assert.False(Router.TryMatch(path, out _));

    [Fact]
    public void NonAsciiRestIsCaptured() => Assert.Equal(["\u05e9\u05dc\u05d5\u05dd/\u4e16\u754c"], Match("/files/\u05e9\u05dc\u05d5\u05dd/\u4e16\u754c").Captures);

    [Fact]
    public void WrongMethodFindsTheEndpointButNoHandler()
    {
        Assert.True(Router.TryMatch("/admin/stats", out var match));
        Assert.Null(match.Endpoint!.GetHandler(HttpMethodKind.Post));
        Assert.Null(match.Endpoint.GetHandler(HttpMethodKind.Unknown));
        Assert.Equal("GET, HEAD", match.Endpoint.Allow);
    }

    [Fact]
    public void AllowListsEveryDeclaredMethod()
    {
        Assert.True(Router.TryMatch("/admin/databases", out var match));
        Assert.Equal("GET, HEAD, PUT, DELETE", match.Endpoint!.Allow);
        Assert.Equal("create-db", match.Endpoint.GetHandler(HttpMethodKind.Put));
    }

    [Fact]
    public void HeadFallsBackToGetUnlessDeclared()
    {
        Assert.Equal("stats", Match("/admin/stats", "HEAD").Handler);
        Assert.Equal("head-doc", Match("/databases/db/docs", "HEAD").Handler);
    }

    [Theory]
    [InlineData("GET", HttpMethodKind.Get)]
    [InlineData("HEAD", HttpMethodKind.Head)]
    [InlineData("POST", HttpMethodKind.Post)]
    [InlineData("PUT", HttpMethodKind.Put)]
    [InlineData("DELETE", HttpMethodKind.Delete)]
    [InlineData("PATCH", HttpMethodKind.Patch)]
    [InlineData("OPTIONS", HttpMethodKind.Options)]
    [InlineData("get", HttpMethodKind.Unknown)]
    [InlineData("TRACE", HttpMethodKind.Unknown)]
    [InlineData("", HttpMethodKind.Unknown)]
    public void MethodsParseOrdinally(string method, HttpMethodKind kind) => Assert.Equal(kind, HttpMethodKinds.Parse(method));

    [Theory]
    [InlineData("admin/stats")]
    [InlineData("")]
    [InlineData("/a*")]
    [InlineData("/*a")]
    [InlineData("/a/$/b")]
    [InlineData("/caf\u00e9")]
    [InlineData("/a b")]
    [InlineData("/a?b")]
    [InlineData("/a%20")]
    [InlineData("/*/*/*/*/*")]
    public void InvalidTemplatesAreRejected(string template) =>
        Assert.Throws<ArgumentException>(() => new TrieRouter<string>.Builder().Add(template, "GET", "x"));

    [Fact]
    public void DuplicateDeclarationIsRejected() =>
        Assert.Throws<InvalidOperationException>(() => new TrieRouter<string>.Builder().Add("/a", "GET", "x").Add("/a", "GET", "y"));

    [Fact]
    public void UnknownDeclaredMethodIsRejected() =>
        Assert.Throws<ArgumentException>(() => new TrieRouter<string>.Builder().Add("/a", "TRACE", "x"));

    [Fact]
    public void MatchingAllocatesNothing()
    {
        string[] paths =
        [
            "/admin/stats", "/databases/Northwind/docs", "/databases/db1/indexes/Orders/ByCompany",
            "/databases/system/special/x", "/not/a/route", "/databases/caf\u00e9/docs/stats",
        ];
        var hits = 0;
        foreach (var path in paths)
        {
            hits += Router.TryMatch(path, out _) ? 1 : 0;
        }

        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 10_000; i++)
        {
            if (Router.TryMatch(paths[i % paths.Length], out var match))
            {
                hits += match.CaptureCount;
            }
        }
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
        Assert.True(hits > 0);
    }

    [Fact]
    public void GeneratedTableOf400RoutesAgreesWithRegexOracle()
    {
        var random = new Random(20261122);
        var templates = GeneratedRoutes.Create(420, random);
        var builder = new TrieRouter<string>.Builder();
        foreach (var template in templates)
        {
            builder.Add(template, "GET", template);
        }
        var router = builder.Build();
        var oracle = templates.ToDictionary(t => t, ToRegex);

        // Every template matches a path made from it, with the right captures.
        foreach (var template in templates)
        {
            var (path, expected) = GeneratedRoutes.SamplePath(template, random);
            Assert.True(router.TryMatch(path, out var match), $"{template} should match {path}");
            var matched = match.Endpoint!.GetHandler(HttpMethodKind.Get)!;
            Assert.Matches(oracle[matched], path);
            if (matched == template)
            {
                var captures = Enumerable.Range(0, match.CaptureCount).Select(i => path[match.GetCapture(i)]).ToArray();
                Assert.Equal(expected, captures);
            }
        }

        // Mutated paths: whenever the trie matches, the oracle agrees; whenever no template's regex matches, the trie misses.
        var alphabet = "/abcdefgsxyz0123456789-_.%\u00e9";
        var checkedPaths = 0;
        for (var i = 0; i < 20_000; i++)
        {
            var (path, _) = GeneratedRoutes.SamplePath(templates[random.Next(templates.Count)], random);
            var chars = path.ToCharArray().ToList();
            var edits = random.Next(1, 3);
            for (var e = 0; e < edits && chars.Count > 1; e++)
            {
                var at = random.Next(1, chars.Count);
                switch (random.Next(3))
                {
                    case 0: chars.RemoveAt(at); break;
                    case 1: chars.Insert(at, alphabet[random.Next(alphabet.Length)]); break;
                    default: chars[at] = alphabet[random.Next(alphabet.Length)]; break;
                }
            }
            var mutated = new string([.. chars]);
            var anyOracle = templates.Any(t => oracle[t].IsMatch(mutated));
            if (router.TryMatch(mutated, out var match))
            {
                Assert.Matches(oracle[match.Endpoint!.GetHandler(HttpMethodKind.Get)!], mutated);
            }
            else
            {
                Assert.False(anyOracle, $"no route matched '{mutated}' but a template's regex does");
            }
            checkedPaths++;
        }
        Assert.Equal(20_000, checkedPaths);
    }

    private static Regex ToRegex(string template)
    {
        var pattern = Regex.Escape(template).Replace(@"\*", "[^/]+", StringComparison.Ordinal).Replace(@"\$", ".*", StringComparison.Ordinal);
        var tolerateSlash = template.EndsWith('$') ? string.Empty : "/?";
        return new Regex($"^{pattern}{tolerateSlash}$", RegexOptions.CultureInvariant | RegexOptions.Singleline);
    }
}

/// <summary>A deterministic table of route templates shaped like a document database's API.</summary>
public static class GeneratedRoutes
{
    private static readonly string[] Resources = ["docs", "indexes", "queries", "subscriptions", "stats", "collections", "attachments", "counters", "revisions", "tasks"];
    private static readonly string[] Verbs = ["stats", "debug", "terms", "explain", "performance", "errors", "status", "reset", "enable", "disable"];

    public static List<string> Create(int count, Random random)
    {
        var set = new SortedSet<string>(StringComparer.Ordinal);
        set.Add("/admin/stats");
        set.Add("/build/version");
        var i = 0;
        while (set.Count < count)
        {
            var resource = Resources[random.Next(Resources.Length)];
            var verb = Verbs[random.Next(Verbs.Length)];
            var template = (i++ % 6) switch
            {
                0 => $"/databases/*/{resource}",
                1 => $"/databases/*/{resource}/{verb}",
                2 => $"/databases/*/{resource}/*/{verb}",
                3 => $"/admin/{resource}{random.Next(40)}/{verb}",
                4 => $"/databases/*/{resource}/{verb}{random.Next(20)}/$",
                _ => $"/v{random.Next(5)}/{resource}/*/{verb}/*",
            };
            set.Add(template);
        }
        return [.. set];
    }

    public static (string Path, string[] Captures) SamplePath(string template, Random random)
    {
        var captures = new List<string>();
        var builder = new System.Text.StringBuilder();
        foreach (var c in template)
        {
            switch (c)
            {
                case '*':
                    var segment = Segment(random);
                    captures.Add(segment);
                    builder.Append(segment);
                    break;
                case '$':
                    var rest = random.Next(3) == 0 ? string.Empty : $"{Segment(random)}/{Segment(random)}";
                    captures.Add(rest);
                    builder.Append(rest);
                    break;
                default:
                    builder.Append(c);
                    break;
            }
        }
        return (builder.ToString(), [.. captures]);
    }

    private static string Segment(Random random)
    {
        string[] samples = ["Northwind", "db1", "caf\u00e9", "my%20db", "x", "\u65e5\u672c", "orders-2026", "a.b_c"];
        return samples[random.Next(samples.Length)];
    }
}
