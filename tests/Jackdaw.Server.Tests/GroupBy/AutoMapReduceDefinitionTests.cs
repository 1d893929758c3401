using System.Text.Json;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Tests.GroupBy;

/// <summary>Auto map-reduce definitions: RavenDB's names, stored and read back, compared.</summary>
public sealed class AutoMapReduceDefinitionTests
{
    [Theory]
    [InlineData(new[] { "Company" }, new[] { "count" }, "Auto/Orders/ByCountReducedByCompany")]
    [InlineData(new[] { "Company" }, new[] { "sum:Freight", "count" }, "Auto/Orders/ByCountAndFreightReducedByCompany")]
    [InlineData(new[] { "Employee", "Company" }, new[] { "count" }, "Auto/Orders/ByCountReducedByCompanyAndEmployee")]
    [InlineData(new[] { "Lines[].Product" }, new[] { "sum:Lines[].Quantity", "count" }, "Auto/Orders/ByCountAndLines[].QuantityReducedByLines[].Product")]
    [InlineData(new[] { "ShipTo.City" }, new string[0], "Auto/OrdersReducedByShipTo.City")]
    public void NamesAreRavenDbs(string[] groupBy, string[] aggregations, string name)
    {
        Assert.Equal(name, IndexDefinition.CreateAutoMapReduce("Orders", groupBy, Parse(aggregations)).Name);
    }

    internal static IEnumerable<AutoAggregationField> Parse(string[] aggregations) =>
        aggregations.Select(a => a == "count" ? AutoAggregationField.Count : AutoAggregationField.Sum(a["sum:".Length..]));

    [Fact]
    public void ItIsAnAutoIndexButNotAnAutoMap()
    {
        var definition = IndexDefinition.CreateAutoMapReduce("Orders", ["Company"], [AutoAggregationField.Count]);
        Assert.Equal(IndexType.AutoMapReduce, definition.Type);
        Assert.Equal("AutoMapReduce", definition.TypeName);
        Assert.True(definition.IsAutoMapReduce);
        Assert.True(definition.IsAutoIndex);
        Assert.True(definition.IsMapReduce);
        Assert.False(definition.IsAuto);
        Assert.True(IndexDefinition.CreateAuto("Orders", [new AutoIndexField("Company", FieldIndexing.Default)]).IsAutoIndex);
    }

    [Fact]
    public void StoredDefinitionsReadBackTheSame()
    {
        var definition = IndexDefinition.CreateAutoMapReduce("Orders", ["Lines[].Product", "Company"], [AutoAggregationField.Sum("Lines[].Quantity"), AutoAggregationField.Count]);
        var json = definition.ToJson();
        Assert.Equal("AutoMapReduce", (string?)json["Type"]);
        Assert.Equal("Yes", (string?)json["Fields"]!["Count"]!["Storage"]);
        Assert.Equal("Yes", (string?)json["Fields"]!["Company"]!["Storage"]);
        using var document = JsonDocument.Parse(json.ToJsonString());
        var read = IndexDefinition.FromStored(document.RootElement);
        Assert.Equal(definition.Name, read.Name);
        Assert.True(read.SameAs(definition));
        Assert.Equal(definition.Aggregations, read.Aggregations);
        Assert.Equal(definition.AutoFields, read.AutoFields);
        Assert.Equal(definition.CreatedAt, read.CreatedAt, TimeSpan.FromMilliseconds(1));
    }

    [Fact]
    public void SameAsComparesGroupByAndAggregations()
    {
        var counted = IndexDefinition.CreateAutoMapReduce("Orders", ["Company"], [AutoAggregationField.Count]);
        Assert.True(counted.SameAs(IndexDefinition.CreateAutoMapReduce("Orders", ["Company"], [AutoAggregationField.Count])));
        Assert.False(counted.SameAs(IndexDefinition.CreateAutoMapReduce("Orders", ["Company"], [AutoAggregationField.Count, AutoAggregationField.Sum("Freight")])));
        Assert.False(counted.SameAs(IndexDefinition.CreateAuto("Orders", [new AutoIndexField("Company", FieldIndexing.Default)])));
        Assert.True(counted.WithName("ReplacementOf/x").SameAs(counted.WithName("ReplacementOf/x")));
        Assert.Equal(counted.Aggregations, counted.WithName("x").Aggregations);
    }
}
