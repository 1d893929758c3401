using System.Reflection;
using System.Text.RegularExpressions;
using NetArchTest.Rules;

namespace Jackdaw.Server.Tests.Architecture;

/// <summary>
/// The server's layers depend one way (docs/architecture.md, "Projects and layers"):
/// Handlers → Hosting → Routing; Handlers → Wire → Indexing → Rql, Databases → Documents →
/// Errors; Handlers → Changes → Indexing, Databases, Documents, Errors; Changes, Subscriptions and
/// Indexing → WebSockets (closing a WebSocket; it uses nothing else of the server); Hosting and
/// Handlers → Security (certificates, clearances; it knows no HTTP); everything →
/// storage. Inside Indexing too: Indexing → Workers → MapReduce → Lucene → Mapping → Definitions, Indexing →
/// Analysis → Lucene, Indexing → JavaScript → Mapping. Each rule names the types that break it.
/// </summary>
public sealed class LayeringTests
{
    private const string Server = "Jackdaw.Server";
    private const string Routing = Server + ".Routing";
    private const string Hosting = Server + ".Hosting";
    private const string Diagnostics = Server + ".Diagnostics";
    private const string Handlers = Server + ".Handlers";
    private const string Wire = Server + ".Wire";
    private const string Databases = Server + ".Databases";
    private const string Documents = Server + ".Documents";
    private const string Errors = Server + ".Errors";
    private const string Cluster = Server + ".Cluster";
    private const string Rql = Server + ".Rql";
    private const string Queries = Server + ".Queries";
    private const string Indexing = Server + ".Indexing";
    private const string Changes = Server + ".Changes";
    private const string Subscriptions = Server + ".Subscriptions";
    private const string WebSockets = Server + ".WebSockets";
    private const string Security = Server + ".Security";
    private const string Backup = Server + ".Backup";
    private const string Patching = Server + ".Patching";
    private const string Traffic = Server + ".Traffic";
    private const string Replication = Server + ".Replication";

    private static readonly Assembly ServerAssembly = typeof(Jackdaw.Server.Hosting.JackdawHost).Assembly;

    // Indexing's folders, each a namespace below the Indexing namespace itself.
    private static readonly string[] IndexingParts = ["Definitions", "Mapping", "JavaScript", "Analysis", "Lucene", "MapReduce", "Workers"];

    private static void AssertNoDependency(string layer, params string[] forbidden) =>
        AssertNoDependency(layer, string.Join(", ", forbidden), forbidden);

    private static void AssertNoDependency(string layer, string described, string[] forbidden)
    {
        var result = Types.InAssembly(ServerAssembly).That().ResideInNamespace(layer).ShouldNot().HaveDependencyOnAny(forbidden).GetResult();
        Assert.True(result.IsSuccessful, $"{layer} must not depend on {described}; these do: {string.Join(", ", result.FailingTypeNames ?? [])}");
    }

    [Fact]
    public void EveryServerTypeLivesInAKnownLayer()
    {
        string[] layers = [Routing, Hosting, Handlers, Wire, Databases, Documents, Errors, Rql, Indexing, Queries, Subscriptions, Changes, WebSockets, Security, Backup, Patching, Traffic, Diagnostics, Replication, Cluster];
        var strays = ServerAssembly.GetTypes()
            .Where(t => t.Namespace is not null && t.Namespace.StartsWith(Server, StringComparison.Ordinal))
            .Where(t => !layers.Any(l => t.Namespace == l || t.Namespace!.StartsWith(l + ".", StringComparison.Ordinal)))
            .Select(t => t.FullName)
            .ToList();
        Assert.True(strays.Count == 0, "Types outside the known layers (add the layer to this test and to docs/architecture.md): " + string.Join(", ", strays));
    }

    /// <summary>
    /// Whether the types of <paramref name="part"/> of Indexing use none of the
    /// <paramref name="forbidden"/> parts and none of the Indexing namespace's own types.
    /// NetArchTest matches namespaces by prefix, and Jackdaw.Server.Indexing is a prefix of every
    /// part's: the part is matched exactly, and the Indexing namespace's types are named one by one.
    /// </summary>
    private static TestResult IndexingPartDependencies(string part, params string[] forbidden)
    {
        var root = ServerAssembly.GetTypes()
            .Where(t => t.Namespace == Indexing && !t.IsNested && !t.Name.StartsWith('<'))
            .Select(t => t.FullName!);
        return Types.InAssembly(ServerAssembly).That().ResideInNamespaceMatching("^" + Regex.Escape(Indexing + "." + part) + "$")
            .ShouldNot().HaveDependencyOnAny([.. root, .. forbidden.Select(f => Indexing + "." + f)]).GetResult();
    }

    private static void AssertIndexingPartDependsOnlyOn(string part, params string[] allowed)
    {
        var forbidden = IndexingParts.Where(p => p != part && !allowed.Contains(p)).ToArray();
        var result = IndexingPartDependencies(part, forbidden);
        Assert.True(result.IsSuccessful, $"Indexing.{part} may use only {(allowed.Length == 0 ? "nothing" : string.Join(", ", allowed))} of Indexing; these use more: {string.Join(", ", result.FailingTypeNames ?? [])}");
    }

    [Fact]
    public void IndexingPartsDependOneWay()
    {
        AssertIndexingPartDependsOnlyOn("Definitions");
        AssertIndexingPartDependsOnlyOn("Mapping", "Definitions");
        AssertIndexingPartDependsOnlyOn("JavaScript", "Mapping", "Definitions");
        AssertIndexingPartDependsOnlyOn("Lucene", "Mapping", "Definitions");
        AssertIndexingPartDependsOnlyOn("Analysis", "Lucene", "Mapping", "Definitions");
        AssertIndexingPartDependsOnlyOn("MapReduce", "Lucene", "Mapping", "Definitions");
        AssertIndexingPartDependsOnlyOn("Workers", "MapReduce", "Lucene", "Mapping", "Definitions");
    }

    /// <summary>
    /// Every namespace of the server, sub-namespaces included, lowest first: each may use those
    /// before it and none after it (docs/architecture.md, "Inside the server"). The rules below add
    /// what the order alone allows but the design does not (Subscriptions never uses Indexing
    /// directly, say).
    /// </summary>
    private static readonly string[] Order =
    [
        Errors, WebSockets, Routing, Security,
        Documents, Documents + ".Commands",
        Databases, Rql,
        Indexing + ".Definitions", Indexing + ".Mapping", Indexing + ".JavaScript", Indexing + ".Lucene", Indexing + ".Analysis", Indexing + ".MapReduce", Indexing + ".Workers", Indexing,
        Queries, Patching, Subscriptions, Changes, Replication, Wire, Backup + ".Smuggler", Backup, Traffic, Diagnostics, Cluster, Hosting, Handlers,
    ];

    /// <summary>The types of exactly namespace <paramref name="ns"/> (not its sub-namespaces), named as the dependency checks name them.</summary>
    private static string[] TypesOf(string ns) => ServerAssembly.GetTypes()
        .Where(t => t.Namespace == ns)
        .Select(t => t.FullName!.Replace('+', '/'))
        .ToArray();

    [Fact]
    public void EveryNamespaceHasItsPlaceInTheOrder()
    {
        var missing = ServerAssembly.GetTypes()
            .Where(t => t.Namespace is not null && t.Namespace.StartsWith(Server + ".", StringComparison.Ordinal) && !Order.Contains(t.Namespace))
            .Select(t => t.Namespace!)
            .Distinct()
            .ToList();
        Assert.True(missing.Count == 0, "Namespaces without a place in LayeringTests.Order (add them, and to docs/architecture.md): " + string.Join(", ", missing));
    }

    [Fact]
    public void NoNamespaceUsesOneAboveIt()
    {
        var failures = new List<string>();
        for (var i = 0; i < Order.Length - 1; i++)
        {
            var above = Order.Skip(i + 1).SelectMany(TypesOf).ToArray();
            var result = Types.InAssembly(ServerAssembly).That().ResideInNamespaceMatching("^" + System.Text.RegularExpressions.Regex.Escape(Order[i]) + "$")
                .ShouldNot().HaveDependencyOnAny(above).GetResult();
            if (result.IsSuccessful)
            {
                continue;
            }
            // Which of the namespaces above: checked one by one only when the layer fails.
            foreach (var higher in Order.Skip(i + 1))
            {
                var one = Types.InAssembly(ServerAssembly).That().ResideInNamespaceMatching("^" + System.Text.RegularExpressions.Regex.Escape(Order[i]) + "$")
                    .ShouldNot().HaveDependencyOnAny(TypesOf(higher)).GetResult();
                if (!one.IsSuccessful)
                {
                    failures.Add($"{Order[i]} uses {higher}, which is above it: {string.Join(", ", one.FailingTypeNames ?? [])}");
                }
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    [Fact]
    public void TheOrderCheckSeesASubNamespaceUsingItsParent()
    {
        // A type of Indexing.Lucene that used Indexing's Index would be caught: the check looks at
        // exact namespaces, not at name prefixes (Indexing.Lucene starts with Indexing).
        var index = TypesOf(Indexing);
        Assert.Contains(Indexing + ".Index", index);
        Assert.DoesNotContain(index, n => n.StartsWith(Indexing + ".Lucene.", StringComparison.Ordinal));
        Assert.False(Types.InAssembly(ServerAssembly).That().ResideInNamespaceMatching("^" + System.Text.RegularExpressions.Regex.Escape(Queries) + "$").ShouldNot().HaveDependencyOnAny(index).GetResult().IsSuccessful);
    }

    [Fact]
    public void TheChecksSeeRealDependencies()
    {
        // Workers write through Lucene's IndexFiles, JavaScript implements Mapping's IIndexMapper,
        // and Index runs the Workers' batches.
        Assert.False(IndexingPartDependencies("Workers", "Lucene").IsSuccessful);
        Assert.False(IndexingPartDependencies("JavaScript", "Mapping").IsSuccessful);
        Assert.False(Types.InAssembly(ServerAssembly).That().ResideInNamespaceMatching("^" + Regex.Escape(Indexing) + "$")
            .ShouldNot().HaveDependencyOn(Indexing + ".Workers").GetResult().IsSuccessful);
        // Handlers use the host's RequestContext and the databases: a check that could not see
        // that would pass every rule above without meaning anything.
        var handlers = Types.InAssembly(ServerAssembly).That().ResideInNamespace(Handlers);
        Assert.False(handlers.ShouldNot().HaveDependencyOn(Hosting).GetResult().IsSuccessful);
        Assert.False(Types.InAssembly(ServerAssembly).That().ResideInNamespace(Handlers).ShouldNot().HaveDependencyOn(Databases).GetResult().IsSuccessful);
        Assert.False(Types.InAssembly(ServerAssembly).That().ResideInNamespace(Wire).ShouldNot().HaveDependencyOn(Documents).GetResult().IsSuccessful);
        // Rules that name single types (the Wire types Subscriptions may not use) see them too.
        Assert.False(Types.InAssembly(ServerAssembly).That().ResideInNamespace(Handlers).ShouldNot().HaveDependencyOn(Hosting + ".RequestContext").GetResult().IsSuccessful);
    }

    [Fact]
    public void RoutingDependsOnNothingElseOfTheServer() =>
        AssertNoDependency(Routing, Hosting, Handlers, Wire, Databases, Documents, Errors);

    [Fact]
    public void WebSocketsDependOnNothingElseOfTheServer() =>
        AssertNoDependency(WebSockets, Routing, Hosting, Handlers, Wire, Databases, Documents, Errors, Rql, Indexing, Subscriptions, Changes);

    [Fact]
    public void HostingDoesNotKnowTheHandlers() => AssertNoDependency(Hosting, Handlers);

    [Fact]
    public void NothingBelowTheHandlersKnowsAspNetCoreHttp()
    {
        foreach (var layer in new[] { Wire, Databases, Documents, Errors, Rql, Indexing, Queries, Subscriptions, Changes, WebSockets, Security, Backup, Traffic })
        {
            AssertNoDependency(layer, "Microsoft.AspNetCore");
        }
    }

    [Fact]
    public void NothingBelowTheHandlersKnowsTheHandlersOrTheHost()
    {
        foreach (var layer in new[] { Wire, Databases, Documents, Errors, Rql, Indexing, Queries, Subscriptions, Changes, WebSockets, Security, Backup, Traffic })
        {
            AssertNoDependency(layer, Handlers, Hosting, Routing);
        }
    }

    [Fact]
    public void LowerLayersDoNotKnowHigherOnes()
    {
        AssertNoDependency(Databases, Wire);
        AssertNoDependency(Documents, Wire, Databases);
        AssertNoDependency(Errors, Wire, Databases, Documents, Rql);
        // DocumentPath, the walk Rql, Indexing and Queries share, lives below all three.
        AssertNoDependency(Documents, Rql, Indexing, Queries);
        AssertNoDependency(Databases, Indexing, Rql);
        AssertNoDependency(Rql, Indexing, Wire);
        AssertNoDependency(Indexing, Wire, Queries);
        AssertNoDependency(Queries, Wire, Subscriptions);
        AssertNoDependency(Subscriptions, Wire, Indexing);
        AssertNoDependency(Databases, Subscriptions);
        // The changes feed sits beside Wire: the handlers wire it to ASP.NET, nothing below knows it.
        AssertNoDependency(Changes, Wire, Subscriptions);
        foreach (var layer in new[] { Wire, Databases, Documents, Errors, Rql, Indexing, Queries, Subscriptions })
        {
            AssertNoDependency(layer, Changes);
        }
    }

    [Fact]
    public void StorageDoesNotReferenceTheServerOrTheClient()
    {
        var storage = typeof(Jackdaw.Storage.Engine.StorageEnvironment).Assembly;
        Assert.DoesNotContain(storage.GetReferencedAssemblies(), a => a.Name is "Jackdaw.Server" or "Jackdaw.Client");
        var result = Types.InAssembly(storage).ShouldNot().HaveDependencyOnAny(Server, "Jackdaw.Client", "Microsoft.AspNetCore").GetResult();
        Assert.True(result.IsSuccessful, "Storage types depend on the server: " + string.Join(", ", result.FailingTypeNames ?? []));
    }
}
