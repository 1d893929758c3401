using System.Text;
using System.Text.Json;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.GroupBy;

/// <summary>The native map and reduce of auto map-reduce indexes, called directly.</summary>
public sealed class AutoMapReduceMapperTests
{
    private static AutoMapReduceMapper Mapper(string[] groupBy, params string[] aggregations) =>
        new(IndexDefinition.CreateAutoMapReduce("Orders", groupBy, AutoMapReduceDefinitionTests.Parse(aggregations)));

    private static List<(string Key, string Entry)> Map(AutoMapReduceMapper mapper, string json)
    {
        using var context = new JsonOperationContext();
        var blittable = context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray();
        var output = new ReduceMapOutput();
        mapper.MapEntries(new MapInput("orders/1", "Orders", blittable), null, output);
        return output.Entries.Select(e => (Encoding.UTF8.GetString(e.Key), Encoding.UTF8.GetString(e.Entry))).ToList();
    }

    private static string Reduce(AutoMapReduceMapper mapper, string key, params string[] values)
    {
        var output = new List<byte[]>();
        mapper.Reduce(Encoding.UTF8.GetBytes(key), values.Select(v => (ReadOnlyMemory<byte>)Encoding.UTF8.GetBytes(v)).ToList(), output);
        return Encoding.UTF8.GetString(Assert.Single(output));
    }

    [Fact]
    public void ADocumentMapsToItsKeyCountAndSums()
    {
        var mapper = Mapper(["Company"], "count", "sum:Freight");
        var (key, entry) = Assert.Single(Map(mapper, """{"Company":"companies/1","Freight":32.38,"@metadata":{"@collection":"Orders"}}"""));
        Assert.Equal("""{"Company":"companies/1"}""", key);
        Assert.Equal("""{"Company":"companies/1","Count":1,"Freight":32.38}""", entry);
    }

    [Fact]
    public void EqualValuesGiveEqualKeyBytes()
    {
        var mapper = Mapper(["Company", "Year"], "count");
        var a = Assert.Single(Map(mapper, """{"Year":1997,"Company":"c\u00e9/1"}""")).Key;
        var b = Assert.Single(Map(mapper, """{"Company":"cé/1","Year":1.997e3}""")).Key;
        var c = Assert.Single(Map(mapper, """{"Company":"cé/1","Year":1997.0}""")).Key;
        Assert.Equal(a, b);
        Assert.Equal(a, c);
        Assert.Equal("""{"Company":"cé/1","Year":1997}""", a);
    }

    [Fact]
    public void MissingAndNonNumericValuesSumToZeroAndAMissingKeyIsNull()
    {
        var mapper = Mapper(["Company"], "count", "sum:Freight");
        Assert.Equal("""{"Company":null,"Count":1,"Freight":0}""", Assert.Single(Map(mapper, """{"Freight":"a lot"}""")).Entry);
        Assert.Equal("""{"Company":"c","Count":1,"Freight":0}""", Assert.Single(Map(mapper, """{"Company":"c","Freight":null}""")).Entry);
        Assert.Equal("""{"Company":"c","Count":1,"Freight":3.5}""", Assert.Single(Map(mapper, """{"Company":"c","Freight":[1,"x",2.5]}""")).Entry);
    }

    [Fact]
    public void NestedPathsAreKeysNamedByTheirPath()
    {
        var mapper = Mapper(["ShipTo.City"], "count");
        Assert.Equal("""{"ShipTo.City":"London"}""", Assert.Single(Map(mapper, """{"ShipTo":{"City":"London"}}""")).Key);
    }

    [Fact]
    public void AnArrayGroupByGivesOneEntryPerElementWithItsOwnSums()
    {
        var mapper = Mapper(["Lines[].Product", "Company"], "count", "sum:Lines[].Quantity", "sum:Freight");
        var entries = Map(mapper, """{"Company":"c/1","Freight":10,"Lines":[{"Product":"p/1","Quantity":2},{"Product":"p/2","Quantity":5},{"Product":"p/1"}]}""");
        Assert.Equal(
        [
            ("""{"Company":"c/1","Lines[].Product":"p/1"}""", """{"Company":"c/1","Lines[].Product":"p/1","Count":1,"Freight":10,"Lines[].Quantity":2}"""),
            ("""{"Company":"c/1","Lines[].Product":"p/2"}""", """{"Company":"c/1","Lines[].Product":"p/2","Count":1,"Freight":10,"Lines[].Quantity":5}"""),
            ("""{"Company":"c/1","Lines[].Product":"p/1"}""", """{"Company":"c/1","Lines[].Product":"p/1","Count":1,"Freight":10,"Lines[].Quantity":0}"""),
        ], entries);
        Assert.Empty(Map(mapper, """{"Company":"c/1","Lines":[]}"""));
        Assert.Equal(2, Map(Mapper(["Tags[]"], "count"), """{"Tags":["a","b"]}""").Count);
    }

    [Fact]
    public void ReduceAddsCountsAndSumsAndKeepsTheKey()
    {
        var mapper = Mapper(["Company"], "count", "sum:Freight");
        var result = Reduce(mapper, """{"Company":"c/1"}""",
            """{"Company":"c/1","Count":1,"Freight":1.10}""", """{"Company":"c/1","Count":1,"Freight":1.90}""", """{"Company":"c/1","Count":1,"Freight":0}""");
        Assert.Equal("""{"Company":"c/1","Count":3,"Freight":3}""", result);
    }

    [Fact]
    public void ReduceIsReReducible()
    {
        var mapper = Mapper(["Company", "ShipTo.City"], "count", "sum:Freight");
        var random = new Random(30);
        const string key = """{"Company":"c/\"1\"","ShipTo.City":{"a":[1,2]}}""";
        for (var round = 0; round < 50; round++)
        {
            var values = Enumerable.Range(0, random.Next(1, 40))
                .Select(_ => $$"""{"Company":"c/\"1\"","ShipTo.City":{"a":[1,2]},"Count":1,"Freight":{{Math.Round(random.NextDouble() * 1000, 2).ToString(System.Globalization.CultureInfo.InvariantCulture)}}}""")
                .ToArray();
            var whole = Reduce(mapper, key, values);
            // Reduce in random leaves, then the leaves' results again.
            var partials = new List<string>();
            for (var i = 0; i < values.Length;)
            {
                var size = random.Next(1, 6);
                partials.Add(Reduce(mapper, key, values.Skip(i).Take(size).ToArray()));
                i += size;
            }
            Assert.Equal(whole, Reduce(mapper, key, partials.OrderBy(_ => random.Next()).ToArray()));
            using var json = JsonDocument.Parse(whole);
            Assert.Equal(values.Length, json.RootElement.GetProperty("Count").GetInt32());
            Assert.Equal(1, json.RootElement.GetProperty("ShipTo.City").GetProperty("a")[0].GetInt32());
        }
    }

    [Fact]
    public void TheTestRunSeesTheEntriesAsFields()
    {
        var mapper = Mapper(["Company"], "count", "sum:Freight");
        var output = new MapOutput();
        using var context = new JsonOperationContext();
        var blittable = context.Parse("""{"Company":"c/1","Freight":2.5}"""u8.ToArray(), BlittableMode.Disk).ToArray();
        mapper.Map(new MapInput("orders/1", "Orders", blittable), null, output);
        var entry = Assert.Single(output.Entries);
        Assert.Equal([new IndexField("Company", "c/1"), new IndexField("Count", 1L), new IndexField("Freight", 2.5)], entry);
        Assert.Equal(["Orders"], mapper.Collections);
        Assert.False(mapper.UsesLoad);
    }
}
