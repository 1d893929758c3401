using Jackdaw.Server.Cluster;
using Jackdaw.Server.Indexing.Analysis;

namespace Jackdaw.Server.Tests.Cluster;

public sealed class ClusterStateAnalyzerTests
{
    private const string Folding = """{"Tokenizer":"Whitespace","TokenFilters":["LowerCase","ASCIIFolding"]}""";
    private const string Words = """{"Name":"Orders/Words","Type":"JavaScriptMap","Maps":["map('Orders', o => ({ Company: o.Company }))"],"Fields":{"Company":{"Analyzer":"folding","Indexing":"Search"}}}""";

    private static ClusterState Apply(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Null(refused);
        return after;
    }

    private static string Refused(ClusterState state, long index, ClusterCommand command)
    {
        var (after, refused) = state.Apply(command, index);
        Assert.Same(state.Databases, after.Databases);
        Assert.Equal(state.Etag, after.Etag);
        return Assert.IsType<string>(refused);
    }

    private static ClusterState WithDatabase()
    {
        var state = Apply(ClusterState.Empty, 1, new ClusterCommand("m1", ClusterCommandKind.PutMember) { Tag = "A", Url = "http://127.0.0.1:1" });
        return Apply(state, 2, new ClusterCommand("db", ClusterCommandKind.PutDatabase) { Database = "Orders", Nodes = ["A"] });
    }

    private static ClusterCommand Put(string id, params AnalyzerDefinition[] analyzers) =>
        new(id, ClusterCommandKind.PutAnalyzers) { Database = "orders", Analyzers = analyzers };

    private static ClusterCommand Delete(string id, string name) =>
        new(id, ClusterCommandKind.DeleteAnalyzer) { Database = "Orders", Analyzer = name };

    [Fact]
    public void AnalyzersArePutReplacedUnderTheirNewCasingAndDeletedInTheRecord()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", new AnalyzerDefinition("Folding", Folding), new AnalyzerDefinition("Words", "WhitespaceAnalyzer")));
        Assert.Equal(["Folding", "Words"], state.Databases["Orders"].Analyzers.Keys);
        Assert.Equal(3, state.Etag);

        // One analyzer per name ignoring case: the name put last, with its code, replaces the one held.
        state = Apply(state, 4, Put("p2", new AnalyzerDefinition("FOLDING", "SimpleAnalyzer")));
        var folding = Assert.Single(state.Databases["Orders"].Analyzers.Values, a => a.Name.Equals("folding", StringComparison.OrdinalIgnoreCase));
        Assert.Equal(new AnalyzerDefinition("FOLDING", "SimpleAnalyzer"), folding);

        state = Apply(state, 5, Delete("d1", "words"));
        Assert.Equal(["FOLDING"], state.Databases["Orders"].Analyzers.Keys);

        // None of that name (deleted twice in a race): nothing changes, nothing is refused.
        var again = Apply(state, 6, Delete("d2", "Words"));
        Assert.Same(state.Databases["Orders"].Analyzers, again.Databases["Orders"].Analyzers);

        // A command applied once changes nothing the second time.
        var repeated = Apply(again, 7, Put("p1", new AnalyzerDefinition("Other", "KeywordAnalyzer")));
        Assert.Same(again, repeated);
    }

    [Fact]
    public void AnAnalyzerAnIndexOfTheRecordNamesIsNotDeletedUntilTheIndexGoes()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", new AnalyzerDefinition("Folding", Folding)));
        state = Apply(state, 4, new ClusterCommand("i1", ClusterCommandKind.PutIndexes)
        {
            Database = "Orders",
            Indexes = [new ClusterIndexChange("Orders/Words") { Definition = Words }],
        });
        Assert.Equal(["Orders/Words"], ClusterState.IndexesNaming(state.Databases["Orders"], "FOLDING"));

        var refused = Refused(state, 5, Delete("d1", "Folding"));
        Assert.Contains("'Orders/Words'", refused, StringComparison.Ordinal);

        state = Apply(state, 6, new ClusterCommand("i2", ClusterCommandKind.DeleteIndexes) { Database = "Orders", Indexes = [new ClusterIndexChange("Orders/Words")] });
        state = Apply(state, 7, Delete("d2", "Folding"));
        Assert.Empty(state.Databases["Orders"].Analyzers);
    }

    [Fact]
    public void APutOfAnalyzersIsRefusedForAMissingDatabaseABuiltInNameOrNoAnalyzers()
    {
        var state = WithDatabase();
        Assert.Contains("does not exist", Refused(state, 3, Put("p1", new AnalyzerDefinition("Folding", Folding)) with { Database = "Invoices" }), StringComparison.Ordinal);
        Assert.Contains("built-in", Refused(state, 3, Put("p2", new AnalyzerDefinition("WhitespaceAnalyzer", Folding))), StringComparison.Ordinal);
        Assert.Contains("carries none", Refused(state, 3, Put("p3")), StringComparison.Ordinal);
        Assert.Contains("no name", Refused(state, 3, Delete("d1", "")), StringComparison.Ordinal);
    }

    [Fact]
    public void TheRecordsAnalyzersSurviveASnapshotAndOlderSnapshotsHaveNone()
    {
        var state = Apply(WithDatabase(), 3, Put("p1", new AnalyzerDefinition("Folding", Folding)));
        var read = ClusterState.FromJson(state.ToJson());
        Assert.Equal(new AnalyzerDefinition("Folding", Folding), read.Databases["Orders"].Analyzers["folding"]);

        var older = """{"Members":{"A":"http://127.0.0.1:1"},"Databases":[{"Name":"Orders","Nodes":["A"],"TopologyEtag":2,"Settings":{},"CreatedIndex":2}],"AppliedIds":["m1","db"],"Etag":2}""";
        Assert.Empty(ClusterState.FromJson(System.Text.Encoding.UTF8.GetBytes(older)).Databases["Orders"].Analyzers);
    }

    [Fact]
    public void AnAnalyzerCommandReadsBackFromTheLogAsWritten()
    {
        var command = Put("p1", new AnalyzerDefinition("Folding", Folding));
        var read = System.Text.Json.JsonSerializer.Deserialize<ClusterCommand>(ClusterStateMachine.Serialize(command))!;
        Assert.Equal(ClusterCommandKind.PutAnalyzers, read.Kind);
        Assert.Equal([new AnalyzerDefinition("Folding", Folding)], read.Analyzers!);
        Assert.Equal("Folding", System.Text.Json.JsonSerializer.Deserialize<ClusterCommand>(ClusterStateMachine.Serialize(Delete("d1", "Folding")))!.Analyzer);
    }
}
