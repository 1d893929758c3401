using System.Text.Json;
using Jackdaw.Client.Json;
using ServerDefinition = Jackdaw.Server.Indexing.Definitions.IndexDefinition;

namespace Jackdaw.Client.Tests.Indexes;

/// <summary>
/// The client decides before a PUT which indexes the server will rebuild: its verdict must be the
/// server's own (<c>IndexDefinition.SameAs</c>) for every pair of definitions.
/// </summary>
public sealed class IndexDefinitionComparisonTests
{
    public static TheoryData<string, string> Pairs => new()
    {
        // Maps, then Fields, of the current and the wanted definition.
        { """["map('Users', u => ({ Name: u.Name }))"]""", """["map('Users', u => ({ Name: u.Name }))"]""" },
        { """["map('Users', u => ({ Name: u.Name }))"]""", """["  map('Users',\n\tu => ({ Name:   u.Name }))\r\n"]""" },
        { """["map('Users', u => ({ Name: u.Name }))"]""", """["map('Users', u => ({ Name: u. Name }))"]""" },
        { """["map('Users', u => ({ Name: u.Name }))"]""", """["map('Users', u => ({ Name: u.Name, Age: u.Age }))"]""" },
        { """["map('Users', u => ({ A: u.A }))","map('People', p => ({ A: p.A }))"]""", """["map('People', p => ({ A: p.A }))","map('Users', u => ({ A: u.A }))"]""" },
        { """["map('Users', u => ({ A: u.A }))"]""", """["map('Users', u => ({ A: u.A }))","map('People', p => ({ A: p.A }))"]""" },
    };

    public static TheoryData<string, string> FieldPairs => new()
    {
        { "{}", "{}" },
        { "{}", """{"Name":{"Indexing":"Default","Storage":"No"}}""" },
        { "{}", """{"Name":{}}""" },
        { """{"Name":{"Indexing":"Default"}}""", """{"Name":{"Storage":"No"}}""" },
        { "{}", """{"Name":{"Indexing":"Exact"}}""" },
        { """{"Name":{"Indexing":"Exact"}}""", """{"Name":{"Indexing":"Search"}}""" },
        { """{"Name":{"Indexing":"Exact"}}""", """{"name":{"Indexing":"Exact"}}""" },
        { """{"Name":{"Indexing":"Exact"}}""", """{"Name":{"Indexing":"Exact","Storage":"No"}}""" },
        { "{}", """{"Name":{"Storage":"Yes"}}""" },
        { """{"Name":{"Indexing":"No","Storage":"Yes"}}""", """{"Name":{"Storage":"Yes","Indexing":"No"}}""" },
        { "{}", """{"Name":{"Analyzer":"Folding"}}""" },
        { """{"Name":{"Indexing":"Search","Analyzer":"Folding"}}""", """{"Name":{"Analyzer":"Folding"}}""" },
        { """{"Name":{"Analyzer":"Folding"}}""", """{"Name":{"Analyzer":" Folding "}}""" },
        { """{"Name":{"Analyzer":"Folding"}}""", """{"Name":{"Analyzer":"folding"}}""" },
        { """{"Name":{"Analyzer":"Folding"}}""", """{"Name":{"Indexing":"Search"}}""" },
        { """{"Name":{"Indexing":"Exact","Analyzer":"Folding"}}""", """{"Name":{"Indexing":"Exact"}}""" },
        { "{}", """{"Name":{"Analyzer":" "}}""" },
        { "{}", """{"Name":{"Indexing":"Default","Analyzer":null}}""" },
    };

    private const string ByName = "groupBy(r => r.Name).aggregate(g => ({ Name: g.key }))";

    // The reduce members of the current and the wanted definition, spliced into each definition's JSON.
    public static TheoryData<string, string> ReducePairs => new()
    {
        { "", "" },
        { "", Reduce(ByName) },
        { "", Reduce("  ") },
        { Reduce(ByName), Reduce(" groupBy(r => r.Name).aggregate(g =>\n ({ Name:  g.key }))") },
        { Reduce(ByName), Reduce("groupBy(r => r.Name).aggregate(g => ({ Name: g.key, N: 1 }))") },
        { Reduce(ByName), Reduce(ByName, "Totals") },
        { Reduce(ByName, "Totals"), Reduce(ByName, " totals ") },
        { Reduce(ByName, "Totals"), Reduce(ByName, "Sums") },
        { Reduce(ByName, "Totals"), Reduce(ByName, "Totals", references: "Refs") },
        { Reduce(ByName, "Totals", "r/{Name}"), Reduce(ByName, "Totals", "R/{Name}") },
        { Reduce(ByName, "Totals", "r/{Name}"), Reduce(ByName, "Totals", "r/{Name}", "totals/references") },
        { Reduce(ByName, "Totals", "r/{Name}"), Reduce(ByName, "Totals", "r/{Name}", "Refs") },
        { Reduce(ByName, "Totals", "r/{Name}", " "), Reduce(ByName, "Totals", "r/{Name}") },
    };

    private static string Reduce(string script, string? output = null, string? pattern = null, string? references = null) =>
        "," + string.Join(',', new (string Name, string? Value)[]
            {
                ("Reduce", script),
                ("OutputReduceToCollection", output),
                ("PatternForOutputReduceToCollectionReferences", pattern),
                ("PatternReferencesCollectionName", references),
            }
            .Where(m => m.Value is not null)
            .Select(m => JsonSerializer.Serialize(m.Name) + ":" + JsonSerializer.Serialize(m.Value)));

    [Theory]
    [MemberData(nameof(ReducePairs))]
    public void ReducesAndTheirOutputCompareAsTheServerComparesThem(string currentReduce, string wantedReduce) =>
        AssertSameVerdict("""["map('Users', u => ({ Name: u.Name }))"]""", "{}", """["map('Users', u => ({ Name: u.Name }))"]""", "{}", currentReduce, wantedReduce);

    [Theory]
    [MemberData(nameof(Pairs))]
    public void MapsCompareAsTheServerComparesThem(string currentMaps, string wantedMaps) =>
        AssertSameVerdict(currentMaps, "{}", wantedMaps, "{}");

    [Theory]
    [MemberData(nameof(FieldPairs))]
    public void FieldOptionsCompareAsTheServerComparesThem(string currentFields, string wantedFields) =>
        AssertSameVerdict("""["map('Users', u => ({ Name: u.Name }))"]""", currentFields, """["map('Users', u => ({ Name: u.Name }))"]""", wantedFields);

    [Fact]
    public void AnAutoIndexIsNeverTheSameAsAStaticDefinition()
    {
        var auto = new IndexDefinition { Name = "Auto/Users/ByName", Type = IndexType.AutoMap };

        Assert.False(IndexDefinitionComparison.SameAs(auto, new IndexDefinition { Name = "Auto/Users/ByName" }));
    }

    private static void AssertSameVerdict(string currentMaps, string currentFields, string wantedMaps, string wantedFields, string currentReduce = "", string wantedReduce = "")
    {
        var current = $$"""{"Name":"Users/Test","Maps":{{currentMaps}},"Fields":{{currentFields}}{{currentReduce}}}""";
        var wanted = $$"""{"Name":"Users/Test","Maps":{{wantedMaps}},"Fields":{{wantedFields}}{{wantedReduce}}}""";
        using var currentJson = JsonDocument.Parse(current);
        using var wantedJson = JsonDocument.Parse(wanted);
        var server = ServerDefinition.FromJson(currentJson.RootElement).SameAs(ServerDefinition.FromJson(wantedJson.RootElement));

        var client = IndexDefinitionComparison.SameAs(
            JsonSerializer.Deserialize<IndexDefinition>(current, WireJson.Options)!,
            JsonSerializer.Deserialize<IndexDefinition>(wanted, WireJson.Options)!);

        Assert.Equal(server, client);
    }
}
