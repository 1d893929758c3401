using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Security;
using Jackdaw.Server.Tests.Infrastructure;
using Jackdaw.Server.Tests.Readme;

namespace Jackdaw.Server.Tests.Security;

/// <summary>
/// The route table of <c>docs/architecture.md</c> ("Route access"): it lists exactly the routes the
/// server declares, with the access each declares, and a secured server refuses each route to exactly
/// the callers that table says lack its access. A route added without a row fails here.
/// </summary>
public sealed partial class RouteAccessTableTests
{
    private const string Database = "walk";

    [Fact]
    public void TheArchitectureDocumentListsEveryRouteWithTheAccessItDeclares()
    {
        var documented = DocumentedRoutes();
        var problems = new List<string>();
        foreach (var (method, template, access) in RouteDiscovery.Routes([typeof(JackdawHost).Assembly]))
        {
            if (access is null)
            {
                problems.Add($"{method} {template} declares no [Access]");
            }
            else if (!documented.TryGetValue((method, template), out var row))
            {
                problems.Add($"{method} {template} ({access}) is missing: add the row '| {method} | `{template}` | {access} |'");
            }
            else if (row != access)
            {
                problems.Add($"{method} {template} declares {access}, the table says {row}");
            }
            documented.Remove((method, template));
        }
        foreach (var ((method, template), access) in documented)
        {
            problems.Add($"{method} {template} ({access}) is in the table but no handler serves it");
        }
        Assert.True(problems.Count == 0, $"docs/architecture.md, \"Route access\", disagrees with the server's routes:\n  {string.Join("\n  ", problems)}");
    }

    [Fact]
    public void TheTableParserReadsRowsAndRefusesWhatItCannotRead()
    {
        var rows = ParseTable(["#### Route access", "", "| method | template | least access |", "|---|---|---|", "| GET | `/a` | ValidUser |", "| POST | `/databases/*/b` | DatabaseReadWrite |", "", "#### Next"]);
        Assert.Equal(RouteAccess.ValidUser, rows[("GET", "/a")]);
        Assert.Equal(RouteAccess.DatabaseReadWrite, rows[("POST", "/databases/*/b")]);
        Assert.Equal(2, rows.Count);
        Assert.Throws<InvalidOperationException>(() => ParseTable(["#### Route access", "| GET | `/a` | Reader |"]));
        Assert.Throws<InvalidOperationException>(() => ParseTable(["#### Route access", "| GET | `/a` | ValidUser |", "| GET | `/a` | Operator |"]));
        Assert.Throws<InvalidOperationException>(() => ParseTable(["#### Something else"]));
    }

    [Fact]
    public async Task EveryRouteRefusesExactlyTheCallersTheTableSaysLackItsAccess()
    {
        var documented = DocumentedRoutes();
        var routes = RouteDiscovery.Routes([typeof(JackdawHost).Assembly]);
        await using var server = await SecuredServer.StartAsync();
        using (var created = await server.Admin.PutAsync($"/admin/databases?name={Database}", null))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        // Each caller may do everything up to its highest access: the order of RouteAccess is that
        // of the rights (a database Admin may read and write it, an Operator all of that anywhere).
        var callers = new List<(string Name, X509Certificate2? Certificate, RouteAccess Highest)> { ("no certificate", null, RouteAccess.Unauthenticated) };
        void Add(string name, RouteAccess highest, SecurityClearance clearance, params (string, DatabaseAccess)[] permissions)
        {
            var certificate = TestCertificates.Client(name);
            server.Register(certificate, clearance, permissions);
            callers.Add((name, certificate, highest));
        }
        Add("ValidUser of another database", RouteAccess.ValidUser, SecurityClearance.ValidUser, ("elsewhere", DatabaseAccess.Admin));
        Add("ValidUser with Read", RouteAccess.DatabaseRead, SecurityClearance.ValidUser, (Database, DatabaseAccess.Read));
        Add("ValidUser with ReadWrite", RouteAccess.DatabaseReadWrite, SecurityClearance.ValidUser, (Database, DatabaseAccess.ReadWrite));
        Add("ValidUser with Admin", RouteAccess.DatabaseAdmin, SecurityClearance.ValidUser, (Database, DatabaseAccess.Admin));
        Add("Operator", RouteAccess.Operator, SecurityClearance.Operator);
        Add("ClusterAdmin", RouteAccess.ClusterAdmin, SecurityClearance.ClusterAdmin);

        // No request carries a query or a body, so the handlers that run refuse them (400) or find
        // nothing to change: nothing the walk needs is destroyed, whatever order the callers go in.
        // The authorization decision comes before the handler, so that is all it takes to see it.
        try
        {
            var failures = await Task.WhenAll(callers.Select(caller => Task.Run(() => WalkAsync(server.Client(caller.Certificate), caller.Name, caller.Certificate is null, caller.Highest, routes, documented))));
            var all = routes.Where(r => !documented.ContainsKey((r.Method, r.Template))).Select(r => $"{r.Method} {r.Template} is not in the table: no caller knows what to expect")
                .Concat(failures.SelectMany(f => f)).ToList();
            Assert.True(all.Count == 0, $"{all.Count} authorization decision(s) disagree with the route table:\n  {string.Join("\n  ", all)}");
        }
        finally
        {
            foreach (var (_, certificate, _) in callers)
            {
                certificate?.Dispose();
            }
        }
    }

    /// <summary>Every route once, as one caller: what disagrees with the table.</summary>
    private static async Task<List<string>> WalkAsync(HttpClient client, string caller, bool anonymous, RouteAccess highest,
        IEnumerable<(string Method, string Template, RouteAccess? Access)> routes, Dictionary<(string Method, string Template), RouteAccess> documented)
    {
        var wrong = new List<string>();
        var expected = anonymous ? HttpStatusCode.Unauthorized : HttpStatusCode.Forbidden;
        foreach (var (method, template, _) in routes)
        {
            if (!documented.TryGetValue((method, template), out var needed))
            {
                continue;
            }
            var (status, type) = await SendAsync(client, method, template.Replace("*", Database, StringComparison.Ordinal));
            var refused = status is HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden;
            if (needed > highest && (status != expected || (type is not null && type != ErrorTypes.Authorization)))
            {
                wrong.Add($"{caller}: {method} {template} needs {needed}: answered {(int)status} {type}, not {(int)expected} {ErrorTypes.Authorization}");
            }
            else if (needed <= highest && refused)
            {
                wrong.Add($"{caller}: {method} {template} needs {needed}: refused ({(int)status} {type})");
            }
        }
        return wrong;
    }

    /// <summary>The status and, for an error with a JSON body, its <c>Type</c>; only the headers are awaited (a feed never ends).</summary>
    private static async Task<(HttpStatusCode Status, string? Type)> SendAsync(HttpClient client, string method, string path)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), path);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, timeout.Token);
        if (response.StatusCode is not (HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden) || method == "HEAD")
        {
            return (response.StatusCode, null);
        }
        var body = await response.Content.ReadAsStringAsync(timeout.Token);
        try
        {
            using var json = JsonDocument.Parse(body);
            return (response.StatusCode, json.RootElement.TryGetProperty("Type", out var type) ? type.GetString() : null);
        }
        catch (JsonException)
        {
            return (response.StatusCode, $"(not JSON: {body})");
        }
    }

    /// <summary>The rows of the "Route access" table of docs/architecture.md.</summary>
    private static Dictionary<(string Method, string Template), RouteAccess> DocumentedRoutes() =>
        ParseTable(File.ReadAllLines(Path.Combine(ReadmeDocument.RepositoryRoot, "docs", "architecture.md")));

    /// <summary>Reads the table that follows the heading "Route access", up to the next heading; a row it cannot read is an error.</summary>
    private static Dictionary<(string Method, string Template), RouteAccess> ParseTable(IReadOnlyList<string> lines)
    {
        var start = -1;
        for (var i = 0; i < lines.Count && start < 0; i++)
        {
            if (lines[i].StartsWith('#') && lines[i].TrimStart('#').Trim() == "Route access")
            {
                start = i + 1;
            }
        }
        if (start < 0)
        {
            throw new InvalidOperationException("docs/architecture.md has no heading \"Route access\".");
        }
        var rows = new Dictionary<(string, string), RouteAccess>();
        for (var i = start; i < lines.Count && !lines[i].StartsWith('#'); i++)
        {
            if (!lines[i].StartsWith('|') || Separator().IsMatch(lines[i]) || lines[i].StartsWith("| method ", StringComparison.Ordinal))
            {
                continue;
            }
            var match = Row().Match(lines[i]);
            if (!match.Success || !Enum.TryParse<RouteAccess>(match.Groups["access"].Value, out var access))
            {
                throw new InvalidOperationException($"docs/architecture.md line {i + 1} is not a row '| METHOD | `template` | access |' with an access of {string.Join(", ", Enum.GetNames<RouteAccess>())}: {lines[i]}");
            }
            if (!rows.TryAdd((match.Groups["method"].Value, match.Groups["template"].Value), access))
            {
                throw new InvalidOperationException($"docs/architecture.md line {i + 1} repeats a route: {lines[i]}");
            }
        }
        return rows;
    }

    [GeneratedRegex(@"^\|\s*(?<method>[A-Z]+)\s*\|\s*`(?<template>/[^`]*)`\s*\|\s*(?<access>\w+)\s*\|\s*$")]
    private static partial Regex Row();

    [GeneratedRegex(@"^\|(\s*:?-+:?\s*\|)+\s*$")]
    private static partial Regex Separator();
}
