// One file because every case drives the same JavaScriptMapper through one shared harness (Map,
// Document, the loader fake); split by topic it would spread that harness over several files.
using System.Text;
using System.Text.Json.Nodes;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.JavaScript;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// JavaScript index maps over blittable documents: the entries RavenDB's JavaScript indexes give,
/// the lazy document object seen through every way a script can look at it, RavenDB's functions,
/// every compile error with its position, and every sandbox limit followed by a document that maps.
/// </summary>
public sealed class JavaScriptMapperTests
{
    private const string Order = """
        {"Company":"companies/1","Employee":"employees/7","OrderedAt":"2026-03-16T17:23:30.464Z","ShippedAt":null,
         "ShipTo":{"City":"Veumland","Country":"Qatar","Location":{"Lat":25.3,"Lng":51.5}},
         "Freight":114.52,"Valid":false,"Tags":["rush",["gift","fragile"]],
         "Lines":[{"Product":"products/1","PricePerUnit":10.5,"Quantity":2,"Discount":0},
                  {"Product":"products/2","PricePerUnit":4,"Quantity":3,"Discount":0.25}],
         "@metadata":{"@id":"orders/1","@collection":"Orders","@change-vector":"A:1-abc","@last-modified":"2026-03-16T17:23:30.4640000Z"}}
        """;

    private const string OrdersTotals = "map('Orders', o => ({ Company: o.Company, Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0), OrderedAt: o.OrderedAt }))";

    // Jint then checks on every read that the lazy document's answers agree with one another (a
    // probe saying Missing for a key GetOwnProperty finds would silently drop it from Object.keys,
    // spread and JSON.stringify). It takes effect if set before Jint first checks, which in this
    // test assembly is the JavaScript index tests.
    static JavaScriptMapperTests() => AppContext.SetSwitch("Jint.EnableHostContractVerification", true);

    private static MapInput Doc(string id, string collection, string json)
    {
        using var context = new JsonOperationContext();
        return new MapInput(id, collection, context.Parse(Encoding.UTF8.GetBytes(json), BlittableMode.Disk).ToArray());
    }

    private static MapInput OrderDoc(string id = "orders/1") => Doc(id, "Orders", Order);

    private static List<IndexField[]> MapOne(string map, MapInput document, IMapDocumentLoader? loader = null)
    {
        using var index = JavaScriptMapper.Compile("Test", [map]);
        var output = new MapOutput();
        index.Map(document, loader, output);
        return output.Entries;
    }

    private static Dictionary<string, object?> Single(List<IndexField[]> entries) =>
        Assert.Single(entries).ToDictionary(f => f.Name, f => f.Value);

    private sealed class FakeLoader(params MapInput[] documents) : IMapDocumentLoader
    {
        // One buffer for every load, overwritten each time, as a loader reading pages may do.
        private readonly byte[] _buffer = new byte[64 * 1024];

        public List<string> Asked { get; } = new();

        public MapInput? Load(string id)
        {
            Asked.Add(id);
            var found = documents.FirstOrDefault(d => string.Equals(d.Id, id, StringComparison.OrdinalIgnoreCase));
            if (found is null)
            {
                return null;
            }

            found.Blittable.Span.CopyTo(_buffer);
            return new MapInput(found.Id, found.Collection, _buffer.AsMemory(0, found.Blittable.Length));
        }
    }

    [Fact]
    public void OrdersTotalsComputesTheTotalOfTheLines()
    {
        var entry = Single(MapOne(OrdersTotals, OrderDoc()));

        Assert.Equal(["Company", "Total", "OrderedAt"], entry.Keys);
        Assert.Equal("companies/1", entry["Company"]);
        Assert.Equal(33L, entry["Total"]);
        Assert.Equal("2026-03-16T17:23:30.464Z", entry["OrderedAt"]);
    }

    [Fact]
    public void ArrayResultFansOutOneEntryPerObject()
    {
        var entries = MapOne("map('Orders', o => o.Lines.map(l => ({ Product: l.Product, Company: o.Company })))", OrderDoc());

        Assert.Equal(2, entries.Count);
        Assert.Equal([new IndexField("Product", "products/1"), new IndexField("Company", "companies/1")], entries[0]);
        Assert.Equal([new IndexField("Product", "products/2"), new IndexField("Company", "companies/1")], entries[1]);
    }

    [Fact]
    public void NullUndefinedAndNullItemsGiveNoEntries()
    {
        Assert.Empty(MapOne("map('Orders', o => null)", OrderDoc()));
        Assert.Empty(MapOne("map('Orders', function (o) { })", OrderDoc()));
        Assert.Single(MapOne("map('Orders', o => [null, { A: 1 }, undefined])", OrderDoc()));
    }

    [Fact]
    public void NestedPathsArraysAndObjectsConvert()
    {
        var entry = Single(MapOne("""
            map('Orders', o => ({
                City: o.ShipTo.City,
                Lat: o.ShipTo.Location.Lat,
                SecondProduct: o['Lines'][1].Product,
                Products: o.Lines.map(l => l.Product),
                Tags: o.Tags,
                Nested: [[1, 2], [3, [4, [5]]]],
                ShipTo: o.ShipTo,
                Literal: { b: 1, a: [true, null] },
            }))
            """, OrderDoc()));

        Assert.Equal("Veumland", entry["City"]);
        Assert.Equal(25.3, entry["Lat"]);
        Assert.Equal("products/2", entry["SecondProduct"]);
        Assert.Equal(["products/1", "products/2"], Assert.IsAssignableFrom<IReadOnlyList<object?>>(entry["Products"]));
        Assert.Equal(["rush", "gift", "fragile"], Assert.IsAssignableFrom<IReadOnlyList<object?>>(entry["Tags"]));
        Assert.Equal([1L, 2L, 3L, 4L, 5L], Assert.IsAssignableFrom<IReadOnlyList<object?>>(entry["Nested"]));
        Assert.Equal(new IndexJson("""{"City":"Veumland","Country":"Qatar","Location":{"Lat":25.3,"Lng":51.5}}"""), entry["ShipTo"]);
        Assert.Equal(new IndexJson("""{"b":1,"a":[true,null]}"""), entry["Literal"]);
    }

    [Fact]
    public void NullIsAFieldAndUndefinedIsNone()
    {
        var entry = Single(MapOne(
            "map('Orders', o => ({ Shipped: o.ShippedAt, Missing: o.NoSuchField, Null: null, Undefined: undefined, Fn: () => 1, Items: [1, undefined, null] }))",
            OrderDoc()));

        Assert.Equal(["Shipped", "Null", "Items"], entry.Keys);
        Assert.Null(entry["Shipped"]);
        Assert.Null(entry["Null"]);
        Assert.Equal([1L, null], Assert.IsAssignableFrom<IReadOnlyList<object?>>(entry["Items"]));
    }

    [Fact]
    public void ValuesConvertByType()
    {
        var entry = Single(MapOne("""
            map('Orders', o => ({
                Int: 3, Fraction: 2.5, Huge: 2 ** 70, MinLong: -(2 ** 63), NegativeZero: -0, NaN: 0 / 0, Infinity: 1 / 0,
                Freight: o.Freight, Quantity: o.Lines[0].Quantity, Valid: o.Valid, Text: 'x',
                Date: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)), BadDate: new Date('nope'),
            }))
            """, OrderDoc()));

        Assert.Equal(3L, entry["Int"]);
        Assert.Equal(2.5, entry["Fraction"]);
        Assert.Equal(Math.Pow(2, 70), entry["Huge"]);
        Assert.Equal(long.MinValue, entry["MinLong"]);
        Assert.Equal(-0.0, Assert.IsType<double>(entry["NegativeZero"]));
        Assert.True(double.IsNegative((double)entry["NegativeZero"]!));
        Assert.Null(entry["NaN"]);
        Assert.Null(entry["Infinity"]);
        Assert.Equal(114.52, entry["Freight"]);
        Assert.Equal(2L, entry["Quantity"]);
        Assert.Equal(false, entry["Valid"]);
        Assert.Equal("x", entry["Text"]);
        Assert.Equal("2020-01-02T03:04:05.0060000Z", entry["Date"]);
        Assert.Null(entry["BadDate"]);
    }

    [Fact]
    public void IdAndMetadataComeFromTheStoredDocument()
    {
        var entry = Single(MapOne("""
            map('Orders', o => ({
                Id: id(o), MetadataId: o['@metadata']['@id'], Collection: getMetadata(o)['@collection'],
                ChangeVector: getMetadata(o)['@change-vector'], PlainId: id({ '@metadata': { '@id': 'x/1' } }), NoId: id({}),
            }))
            """, OrderDoc("orders/1")));

        Assert.Equal("orders/1", entry["Id"]);
        Assert.Equal("orders/1", entry["MetadataId"]);
        Assert.Equal("Orders", entry["Collection"]);
        Assert.Equal("A:1-abc", entry["ChangeVector"]);
        Assert.Equal("x/1", entry["PlainId"]);
        Assert.Null(entry["NoId"]);
    }

    [Fact]
    public void LoadReadsOtherDocumentsAndRecordsEveryIdAsked()
    {
        var loader = new FakeLoader(
            Doc("companies/1", "Companies", """{"Name":"Acme","Address":{"City":"Paris"},"@metadata":{"@id":"companies/1"}}"""),
            Doc("employees/7", "Employees", """{"FirstName":"Ann","@metadata":{"@id":"employees/7"}}"""));
        const string map = """
            map('Orders', o => {
                const company = load(o.Company);
                const employee = load(o.Employee, 'Employees');
                return {
                    Company: company.Name, City: company.Address.City, CompanyId: id(company),
                    Employee: employee.FirstName, AgainSame: load('COMPANIES/1') === company,
                    Missing: load('companies/404'), WrongCollection: load(o.Employee, 'Companies'), NoId: load(null),
                };
            })
            """;
        using var index = JavaScriptMapper.Compile("Test", [map]);
        var output = new MapOutput();

        index.Map(OrderDoc(), loader, output);

        var entry = Single(output.Entries);
        Assert.Equal("Acme", entry["Company"]);
        Assert.Equal("Paris", entry["City"]);
        Assert.Equal("companies/1", entry["CompanyId"]);
        Assert.Equal("Ann", entry["Employee"]);
        Assert.Equal(true, entry["AgainSame"]);
        Assert.Null(entry["Missing"]);
        Assert.Null(entry["WrongCollection"]);
        Assert.Null(entry["NoId"]);
        Assert.Equal(["companies/1", "employees/7", "companies/404"], output.LoadedIds);
        Assert.Equal(["companies/1", "employees/7", "companies/404"], loader.Asked);
        Assert.True(index.UsesLoad);
    }

    [Fact]
    public void NoTrackingLoadReadsTheDocumentWithoutRecordingItsId()
    {
        var loader = new FakeLoader(
            Doc("companies/1", "Companies", """{"Name":"Acme","@metadata":{"@id":"companies/1"}}"""),
            Doc("employees/7", "Employees", """{"FirstName":"Ann","@metadata":{"@id":"employees/7"}}"""));
        const string map = """
            map('Orders', o => {
                const company = noTracking.load(o.Company, 'Companies');
                const again = load(o.Company);
                return { Company: company.Name, Same: again === company, Employee: noTracking.load(o.Employee).FirstName, Wrong: noTracking.load(o.Employee, 'Companies') };
            })
            """;
        using var index = JavaScriptMapper.Compile("Test", [map]);
        var output = new MapOutput();

        index.Map(OrderDoc(), loader, output);

        var entry = Single(output.Entries);
        Assert.Equal("Acme", entry["Company"]);
        Assert.Equal(true, entry["Same"]);
        Assert.Equal("Ann", entry["Employee"]);
        Assert.Null(entry["Wrong"]);
        // Only the tracked load of companies/1 is a reference; employees/7 was read untracked.
        Assert.Equal(["companies/1"], output.LoadedIds);
        Assert.True(index.UsesLoad);
    }

    [Fact]
    public void AMapThatOnlyLoadsWithoutTrackingStillGetsALoader()
    {
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => ({ Company: noTracking.load(o.Company).Name }))"]);
        Assert.True(index.UsesLoad);
    }

    [Fact]
    public void AdditionalSourcesRunFirstAndTheirFunctionsServeTheMaps()
    {
        var loader = new FakeLoader(Doc("companies/1", "Companies", """{"Name":"Acme","@metadata":{"@id":"companies/1"}}"""));
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => ({ Total: total(o), Company: companyName(o) }))"], additionalSources: new Dictionary<string, string>
        {
            ["totals.js"] = "const rate = 2;\nfunction total(o) { return o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0) * rate; }",
            ["companies.js"] = "function companyName(o) { return load(o.Company, 'Companies').Name; }",
        });
        var output = new MapOutput();

        index.Map(OrderDoc(), loader, output);

        var entry = Single(output.Entries);
        Assert.Equal(2 * (2 * 10.5 + 3 * 4), Convert.ToDouble(entry["Total"], System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal("Acme", entry["Company"]);
        Assert.Equal(["companies/1"], output.LoadedIds);
        Assert.True(index.UsesLoad);
    }

    [Theory]
    [InlineData("function broken( {", 1, 19, "AdditionalSources['helpers.js']: ")]
    [InlineData("\nnotDefined();", 2, 1, "ReferenceError: notDefined is not defined")]
    [InlineData("map('Orders', o => o);", null, null, "AdditionalSources['helpers.js'] calls map()")]
    public void AnAdditionalSourceThatFailsNamesItselfAndWhere(string source, int? line, int? column, string expected)
    {
        var error = Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("Test", ["map('Orders', o => o)"], additionalSources: new Dictionary<string, string> { ["helpers.js"] = source }));
        Assert.Contains(expected, error.Message);
        Assert.Equal((line, column), (error.Line, error.Column));
    }

    [Fact]
    public void LoadWithoutALoaderFindsNothingButRecordsTheId()
    {
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => ({ Company: load(o.Company) }))"]);
        var output = new MapOutput();

        index.Map(OrderDoc(), null, output);

        Assert.Null(Single(output.Entries)["Company"]);
        Assert.Equal(["companies/1"], output.LoadedIds);
    }

    [Fact]
    public void UsesLoadIsFalseWithoutALoadCall()
    {
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => ({ Download: o.download, Reload: o.reload(1) }))"]);
        Assert.False(index.UsesLoad);
    }

    [Fact]
    public void SeveralMapsCoverSeveralCollectionsIgnoringCase()
    {
        using var index = JavaScriptMapper.Compile("Test", [
            "map('Orders', o => ({ Kind: 'order', Name: o.Company }))",
            "map('Companies', c => ({ Kind: 'company', Name: c.Name }))",
            "map('orders', o => o.Lines.map(l => ({ Kind: 'line', Name: l.Product })))",
        ]);
        Assert.Equal(["Orders", "Companies"], index.Collections);

        var output = new MapOutput();
        index.Map(Doc("orders/1", "ORDERS", Order), null, output);
        Assert.Equal(["order", "line", "line"], output.Entries.Select(e => e[0].Value));

        output.Clear();
        index.Map(Doc("companies/1", "Companies", """{"Name":"Acme"}"""), null, output);
        Assert.Equal(new IndexField[] { new("Kind", "company"), new("Name", "Acme") }, Assert.Single(output.Entries));

        output.Clear();
        index.Map(Doc("employees/1", "Employees", """{"Name":"Ann"}"""), null, output);
        Assert.Empty(output.Entries);
    }

    [Fact]
    public void OneScriptMayRegisterSeveralMapsAndDeclareHelpers()
    {
        using var index = JavaScriptMapper.Compile("Test", ["""
            map('Orders', function (o) { return { Total: total(o.Lines), Discounted: discounted(o.Lines) }; });

            function total(lines) { return lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0); }
            const discounted = lines => lines.filter(l => l.Discount > 0).length;

            map('Companies', c => ({ Upper: shout(c.Name) }));
            function shout(text) { return text.toUpperCase(); }
            """]);
        Assert.Equal(["Orders", "Companies"], index.Collections);

        var output = new MapOutput();
        index.Map(OrderDoc(), null, output);
        index.Map(Doc("companies/1", "Companies", """{"Name":"Acme"}"""), null, output);

        Assert.Equal(new IndexField[] { new("Total", 33L), new("Discounted", 1L) }, output.Entries[0]);
        Assert.Equal(new IndexField[] { new("Upper", "ACME") }, output.Entries[1]);
    }

    [Fact]
    public void TheLazyDocumentEnumeratesAndSerializesAsTheStoredJson()
    {
        var entry = Single(MapOne("""
            map('Orders', o => {
                const forIn = [];
                for (const key in o.ShipTo) forIn.push(key);
                return {
                    Keys: Object.keys(o).join(','),
                    ForIn: forIn.join(','),
                    Json: JSON.stringify(o),
                    Spread: JSON.stringify({ ...o.ShipTo, Extra: 1 }),
                    Assign: Object.assign({}, o.Lines[1]).Discount,
                    Entries: Object.entries(o.ShipTo.Location).map(([k, v]) => k + '=' + v).join('&'),
                    Has: ('Company' in o) && !('Nope' in o) && o.hasOwnProperty('Lines') && !o.hasOwnProperty('toString'),
                    Inherited: typeof o.toString, Same: o.Lines === o.Lines, Index: o.Lines[0] === o.Lines[0],
                };
            })
            """, OrderDoc()));

        Assert.Equal("Company,Employee,OrderedAt,ShippedAt,ShipTo,Freight,Valid,Tags,Lines,@metadata", entry["Keys"]);
        Assert.Equal("City,Country,Location", entry["ForIn"]);
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(Order), JsonNode.Parse((string)entry["Json"]!)), (string)entry["Json"]!);
        Assert.Equal("""{"City":"Veumland","Country":"Qatar","Location":{"Lat":25.3,"Lng":51.5},"Extra":1}""", entry["Spread"]);
        Assert.Equal(0.25, entry["Assign"]);
        Assert.Equal("Lat=25.3&Lng=51.5", entry["Entries"]);
        Assert.Equal(true, entry["Has"]);
        Assert.Equal("function", entry["Inherited"]);
        Assert.Equal(true, entry["Same"]);
        Assert.Equal(true, entry["Index"]);
    }

    [Fact]
    public void TheLazyDocumentCanBeChangedByTheMap()
    {
        var entry = Single(MapOne("""
            map('Orders', o => {
                o.Lines[0].Quantity = 10;
                o.Company = 'companies/2';
                delete o.Employee;
                o.Added = true;
                o.ShipTo.Location.Lat++;
                return { Company: o.Company, Employee: o.Employee, Added: o.Added, Keys: Object.keys(o).join(','),
                         Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0), Lat: o.ShipTo.Location.Lat,
                         Frozen: (() => { const l = Object.freeze(o.Lines[1]); l.Quantity = 99; return l.Quantity; })() };
            })
            """, OrderDoc()));

        Assert.Equal("companies/2", entry["Company"]);
        Assert.False(entry.ContainsKey("Employee"));
        Assert.Equal(true, entry["Added"]);
        Assert.Equal("Company,OrderedAt,ShippedAt,ShipTo,Freight,Valid,Tags,Lines,@metadata,Added", entry["Keys"]);
        Assert.Equal(117L, entry["Total"]);
        Assert.Equal(26.3, (double)entry["Lat"]!, 10);
        Assert.Equal(3L, entry["Frozen"]);
    }

    [Fact]
    public void ADocumentKeptInAGlobalIsNotReadAfterItsCall()
    {
        using var index = JavaScriptMapper.Compile("Test", ["""
            let previous = null;
            map('Orders', o => {
                const before = previous;
                previous = o;
                return { Previous: before === null ? null : before.Company };
            })
            """]);
        var output = new MapOutput();
        index.Map(OrderDoc("orders/1"), null, output);

        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc("orders/2"), null, output));

        Assert.Contains("orders/2", error.Message);
        Assert.Contains("TypeError: This document belongs to an earlier map call", error.Message);
    }

    [Fact]
    public void ScriptErrorsNameTheErrorAndWhereItHappened()
    {
        using var index = JavaScriptMapper.Compile("Orders/Broken", ["map('Orders', o => ({\n  A: o.Nope.x }))"]);

        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc(), null, new MapOutput()));

        Assert.Equal("Index 'Orders/Broken' could not map 'orders/1': TypeError: Cannot read properties of undefined (reading 'x') (Maps[0], line 2, column 13)", error.Message);
    }

    [Theory]
    [InlineData("throw 'plain';", "uncaught exception: plain (Maps[0], line 1, column 28)")]
    [InlineData("throw o;", "uncaught exception: an object")]
    [InlineData("throw { message: 'mine' };", "uncaught exception: mine")]
    [InlineData("class MyError extends Error { constructor() { super('mine'); this.name = 'MyError'; } } throw new MyError();", "MyError: mine")]
    [InlineData("null.x;", "TypeError: Cannot read properties of null (reading 'x')")]
    public void ThrownValuesAreDescribed(string body, string expected)
    {
        using var index = JavaScriptMapper.Compile("Test", [$"map('Orders', o => {{ {body} }})"]);
        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc(), null, new MapOutput()));
        Assert.Contains("could not map 'orders/1': " + expected, error.Message);
    }

    [Fact]
    public void AFailedDocumentLeavesNoEntriesOfItsOwn()
    {
        using var index = JavaScriptMapper.Compile("Test", [
            "map('Orders', o => ({ A: 1 }))",
            "map('Orders', o => { if (o.Company === 'companies/1') throw new Error('boom'); return { B: 2 }; })",
        ]);
        var output = new MapOutput();
        output.Entries.Add([new IndexField("Earlier", 1L)]);

        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc("orders/1"), null, output));

        Assert.Contains("Error: boom (Maps[1], line 1, column 61)", error.Message);
        Assert.Equal(new IndexField("Earlier", 1L), Assert.Single(Assert.Single(output.Entries)));
    }

    [Theory]
    [InlineData("map('Orders', o => 42)", "returned a number")]
    [InlineData("map('Orders', o => 'text')", "returned a string")]
    [InlineData("map('Orders', o => [1])", "returned an array holding a number at index 0")]
    [InlineData("map('Orders', o => [[{}]])", "returned an array holding an array at index 0")]
    [InlineData("map('Orders', o => () => 1)", "returned a function")]
    public void AMapReturningNeitherObjectsNorNullFails(string map, string expected)
    {
        using var index = JavaScriptMapper.Compile("Test", [map]);
        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc(), null, new MapOutput()));
        Assert.Contains("Maps[0] (Orders) " + expected, error.Message);
    }

    [Theory]
    // A syntax error: the unexpected '}' after "o. " is at column 29 (1-based).
    [InlineData("map('Orders', o => ({ A: o. }))", 1, 29, "Unexpected token")]
    [InlineData("function f(x) {\n  return x +;\n}\nmap('Orders', f)", 2, 13, "Unexpected token")]
    [InlineData("map('Orders', o => ({ A: 1 })", 1, 30, "Unexpected end of input")]
    [InlineData("map(42, o => o)", 1, 1, "takes the collection name as a string, not a number")]
    [InlineData("\n  map('', o => o)", 2, 3, "empty collection name")]
    [InlineData("map('Orders', { A: 1 })", 1, 1, "takes a function as its second argument, not an object")]
    [InlineData("map('Orders')", 1, 1, "takes a function as its second argument, not undefined")]
    [InlineData("map('Orders', o => o);\nundefinedHelper();", 2, 1, "ReferenceError: undefinedHelper is not defined")]
    [InlineData("map('Orders', o => o);\nload('x');", 2, 1, "load() can only be called while a document is mapped")]
    public void CompileErrorsGiveTheLineAndColumnInTheMap(string map, int line, int column, string expected)
    {
        var error = Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("Orders/Totals", ["map('Orders', o => o)", map]));

        Assert.Equal("Orders/Totals", error.IndexName);
        Assert.Equal(line, error.Line);
        Assert.Equal(column, error.Column);
        Assert.Contains("Maps[1]: ", error.Message);
        Assert.Contains(expected, error.Message);
    }

    [Theory]
    [InlineData("function helper(o) { return o; }", "Maps[0] registers no map")]
    [InlineData("", "Maps[0] is empty")]
    [InlineData("  \n ", "Maps[0] is empty")]
    public void CompileErrorsWithoutAPosition(string map, string expected)
    {
        var error = Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("Test", [map]));
        Assert.Contains(expected, error.Message);
        Assert.Null(error.Line);
        Assert.Null(error.Column);
    }

    [Fact]
    public void AScriptThatNeverFinishesFailsToCompile()
    {
        var error = Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("Test", ["map('Orders', o => o);\nwhile (true) {}"]));
        Assert.Contains("Maps[0]: the script ran past its limit of 100000 statements", error.Message);
    }

    [Fact]
    public void AnIndexNeedsANameAndAMap()
    {
        Assert.Contains("has no name", Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("", ["map('Orders', o => o)"])).Message);
        Assert.Contains("has no name", Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("  ", ["map('Orders', o => o)"])).Message);
        Assert.Contains("has no maps", Assert.Throws<IndexCompilationException>(() => JavaScriptMapper.Compile("Test", [])).Message);
    }

    [Fact]
    public void MapCannotBeCalledWhileDocumentsAreMapped()
    {
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => { map('Other', x => x); return {}; })"]);
        var error = Assert.Throws<IndexMapException>(() => index.Map(OrderDoc(), null, new MapOutput()));
        Assert.Contains("cannot be called while documents are mapped", error.Message);
    }

    [Theory]
    [InlineData("while (true) {}", "ran past its limit of 100000 statements")]
    [InlineData("try { while (true) {} } catch (e) { return { Caught: true }; }", "ran past its limit of 100000 statements")]
    [InlineData("const f = n => f(n + 1); f(0);", "nested calls deeper than its limit of 64")]
    [InlineData("try { const f = n => f(n + 1); f(0); } catch (e) { return { Caught: true }; }", "nested calls deeper than its limit of 64")]
    [InlineData("const a = []; for (;;) a.push('x'.repeat(1000) + a.length);", "ran past its memory limit")]
    [InlineData("let s = 'ab'; for (;;) s = s + s;", "ran past its memory limit")]
    [InlineData("return { A: new Array(1e9).fill(0).length };", "ran past its memory limit: The array size 1000000000 is larger than maximum allowed (1000000)")]
    [InlineData("return { A: 'x'.repeat(2 ** 28) };", "ran past its memory limit: 'x'.repeat(268435456) would make a string of 268435456 characters")]
    [InlineData("return { A: String.prototype.repeat.call({ toString() { return 'xx'; } }, 2 ** 27) };", "would make a string of 268435456 characters")]
    [InlineData("const a = []; a.length = 4e9; return { A: a };", "returned an array of 4000000000 items; the limit is 1000000")]
    [InlineData("const a = [1]; a.push(a); return { A: a };", "nested more than 32 deep")]
    [InlineData("return { A: eval('1') };", "String compilation has been disabled")]
    [InlineData("return { A: new Function('return 1')() };", "String compilation has been disabled")]
    public void ASandboxLimitFailsTheDocumentAndTheNextOneMaps(string badBranch, string expected)
    {
        // A generous timeout: on a loaded machine the 1 s default could stop the script before the
        // limit under test does.
        using var index = JavaScriptMapper.Compile("Test", [$$"""map('Orders', o => { if (o.Bad) { {{badBranch}} } return { Company: o.Company }; })"""], JavaScriptLimits.Default with { Timeout = TimeSpan.FromSeconds(60) });
        var output = new MapOutput();

        var error = Assert.Throws<IndexMapException>(() => index.Map(Doc("orders/bad", "Orders", """{"Bad":true,"Company":"companies/9"}"""), null, output));
        Assert.Contains("could not map 'orders/bad'", error.Message);
        Assert.Contains(expected, error.Message);
        Assert.Empty(output.Entries);

        for (var i = 0; i < 3; i++)
        {
            index.Map(OrderDoc(), null, output);
        }

        Assert.Equal(3, output.Entries.Count);
        Assert.All(output.Entries, e => Assert.Equal(new IndexField("Company", "companies/1"), Assert.Single(e)));
    }

    [Fact]
    public void NoBinaryBuffersWeakReferencesOrHostGlobalsAreDefined()
    {
        var entry = Single(MapOne(
            "map('Orders', o => ({ A: [typeof ArrayBuffer, typeof Uint8Array, typeof SharedArrayBuffer, typeof DataView, typeof WeakRef, typeof FinalizationRegistry, typeof ShadowRealm, typeof require, typeof setTimeout, typeof System, typeof importNamespace].join() }))",
            OrderDoc()));
        Assert.Equal(string.Join(',', Enumerable.Repeat("undefined", 11)), entry["A"]);
    }

    [Fact]
    public void TheTimeoutStopsAMapThatStaysUnderTheStatementLimit()
    {
        var limits = new JavaScriptLimits { MaxStatements = int.MaxValue, Timeout = TimeSpan.FromMilliseconds(200) };
        using var index = JavaScriptMapper.Compile("Test", ["map('Orders', o => { if (o.Bad) { while (true) {} } return { Company: o.Company }; })"], limits);
        var output = new MapOutput();

        var error = Assert.Throws<IndexMapException>(() => index.Map(Doc("orders/bad", "Orders", """{"Bad":true}"""), null, output));
        Assert.Contains("ran past its time limit of 200 ms", error.Message);

        index.Map(OrderDoc(), null, output);
        Assert.Single(output.Entries);
    }

    [Fact]
    public void TheDefaultLimitsFitAThousandLineOrder()
    {
        var lines = string.Join(',', Enumerable.Range(0, 1000).Select(i => $$"""{"Product":"products/{{i}}","PricePerUnit":1.5,"Quantity":{{i}}}"""));
        var document = Doc("orders/big", "Orders", $$"""{"Company":"companies/1","Lines":[{{lines}}]}""");
        using var index = JavaScriptMapper.Compile("Test", [
            OrdersTotals,
            "map('Orders', o => o.Lines.map(l => ({ Product: l.Product, Value: helper(l) })));\nfunction helper(l) { const v = l.Quantity * l.PricePerUnit; if (v > 100) { return v; } return 0; }",
        ]);
        var output = new MapOutput();

        index.Map(document, null, output);

        Assert.Equal(1001, output.Entries.Count);
        Assert.Equal(1.5 * 999 * 1000 / 2, Convert.ToDouble(output.Entries[0][1].Value));
    }

    [Fact]
    public void ManyDocumentsMapOnOneEngine()
    {
        using var index = JavaScriptMapper.Compile("Orders/Totals", [OrdersTotals]);
        var output = new MapOutput();
        var orders = Infrastructure.Corpus.Lines("orders", 500).ToList();
        using var context = new JsonOperationContext();
        foreach (var line in orders)
        {
            var json = JsonNode.Parse(line)!;
            var blittable = context.Parse(Encoding.UTF8.GetBytes(line), BlittableMode.Disk).ToArray();
            context.Reset();
            index.Map(new MapInput((string)json["@metadata"]!["@id"]!, "Orders", blittable), null, output);

            var expected = json["Lines"]!.AsArray().Sum(l => (double)l!["Quantity"]! * (double)l!["PricePerUnit"]!);
            var entry = output.Entries[^1];
            Assert.Equal((string?)json["Company"], entry[0].Value);
            Assert.Equal(expected, Convert.ToDouble(entry[1].Value), 6);
        }

        Assert.Equal(orders.Count, output.Entries.Count);
    }
}
