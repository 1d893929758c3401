using BenchmarkDotNet.Attributes;
using Jackdaw.Server.Routing;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Routing.Template;

namespace Jackdaw.Benchmarks.Router;

/// <summary>
/// Route matching over a 400-route table: our trie against ASP.NET Core's <see cref="TemplateMatcher"/>
/// tried route by route over the same table (the baseline).
/// </summary>
[MemoryDiagnoser]
public class RouterBenchmarks
{
    private const int Operations = 1000;

    private TrieRouter<string> _trie = null!;
    private (TemplateMatcher Matcher, string Template)[] _matchers = null!;
    private PathString _pathString;

    [ParamsSource(nameof(Paths))]
    public string Path { get; set; } = string.Empty;

    public static IEnumerable<string> Paths =>
    [
        "/build/version",
        "/databases/Northwind/docs",
        "/databases/Northwind/indexes/Orders/ByCompany",
        "/databases/Northwind/subscriptions/connect",
        "/databases/Northwind/no/such/route",
    ];

    [GlobalSetup]
    public void Setup()
    {
        var templates = RouteTable.Create(400);
        var builder = new TrieRouter<string>.Builder();
        foreach (var template in templates)
        {
            builder.Add(template, "GET", template);
        }
        _trie = builder.Build();
        _matchers = templates
            .Select(t => (new TemplateMatcher(TemplateParser.Parse(RouteTable.ToAspNetTemplate(t)), new RouteValueDictionary()), t))
            .ToArray();
        _pathString = new PathString(Path);
        if (Trie() != AspNetTemplateMatcher())
        {
            throw new InvalidOperationException($"The two routers disagree on {Path}.");
        }
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Operations)]
    public int AspNetTemplateMatcher()
    {
        var found = 0;
        for (var i = 0; i < Operations; i++)
        {
            var values = new RouteValueDictionary();
            foreach (var (matcher, _) in _matchers)
            {
                if (matcher.TryMatch(_pathString, values))
                {
                    found++;
                    break;
                }
            }
        }
        return found;
    }

    [Benchmark(OperationsPerInvoke = Operations)]
    public int Trie()
    {
        var found = 0;
        for (var i = 0; i < Operations; i++)
        {
            if (_trie.TryMatch(Path, out _))
            {
                found++;
            }
        }
        return found;
    }
}

/// <summary>Jackdaw's real routes plus generated ones, 400 in all, in a fixed order.</summary>
public static class RouteTable
{
    private static readonly string[] Real =
    [
        "/build/version", "/admin/stats", "/admin/databases", "/databases/*/stats", "/databases/*/docs",
        "/databases/*/bulk_docs", "/databases/*/collections/stats", "/databases/*/collections/docs",
        "/databases/*/queries", "/databases/*/admin/indexes", "/databases/*/indexes", "/databases/*/indexes/stats",
        "/databases/*/indexes/performance", "/databases/*/subscriptions", "/databases/*/subscriptions/connect",
        "/databases/*/changes", "/databases/*/indexes/$",
    ];

    private static readonly string[] Words = ["orders", "users", "terms", "debug", "metrics", "replication", "etl", "backup", "tasks", "revisions", "counters", "attachments"];

    public static List<string> Create(int count)
    {
        var random = new Random(400);
        var table = new List<string>(Real);
        var seen = new HashSet<string>(table, StringComparer.Ordinal);
        while (table.Count < count)
        {
            var a = Words[random.Next(Words.Length)];
            var b = Words[random.Next(Words.Length)];
            var template = random.Next(4) switch
            {
                0 => $"/databases/*/{a}/{b}{random.Next(30)}",
                1 => $"/admin/{a}/{b}{random.Next(30)}",
                2 => $"/databases/*/{a}{random.Next(30)}/*/{b}",
                _ => $"/monitoring/v{random.Next(9)}/{a}/{b}",
            };
            if (seen.Add(template))
            {
                table.Add(template);
            }
        }
        // Generated routes first: the baseline then has to try most of the table, as a real
        // server's linear matcher would for its later routes.
        return [.. table.Skip(Real.Length), .. table.Take(Real.Length)];
    }

    public static string ToAspNetTemplate(string template)
    {
        var index = 0;
        var segments = template.Split('/').Select(s => s switch
        {
            "*" => $"{{p{index++}}}",
            "$" => "{**rest}",
            _ => s,
        });
        return string.Join('/', segments);
    }
}
