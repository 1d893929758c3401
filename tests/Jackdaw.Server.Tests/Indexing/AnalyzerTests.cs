using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Indexing;

/// <summary>
/// A database's analyzers over HTTP, as RavenDB's clients use them: PUT, list and DELETE; index fields
/// that name one (or a built-in Lucene analyzer) index and search with it; an unknown name, an
/// analyzer in use, bad bodies; a changed analyzer rebuilds the indexes using it; all of it survives a
/// restart.
/// </summary>
public sealed class AnalyzerTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private const string Folding = """{"Tokenizer":"Whitespace","TokenFilters":["LowerCase","ASCIIFolding"]}""";
    private const string Prefixes = """{"Tokenizer":"Standard","TokenFilters":["LowerCase",{"Type":"EdgeNGram","minGramSize":2,"maxGramSize":10}]}""";

    private HttpClient Client => fixture.Client;

    private static string AnalyzersBody(params (string Name, string Code)[] analyzers) =>
        JsonSerializer.Serialize(new { Analyzers = analyzers.Select(a => new { a.Name, a.Code }) });

    private static async Task PutAnalyzersAsync(HttpClient client, string db, params (string Name, string Code)[] analyzers)
    {
        using var response = await client.PutAsync($"/databases/{db}/admin/analyzers", Api.Json(AnalyzersBody(analyzers)));
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync());
        // RavenDB's clients read no body from this answer (the Node.js client fails on one).
        Assert.Equal(0, response.Content.Headers.ContentLength);
    }

    private static async Task PutProductsAsync(HttpClient client, string db)
    {
        var commands = new[]
        {
            ("products/1", "Crème Brûlée", "Bestseller of the year"),
            ("products/2", "creme caramel", "Best value"),
            ("products/3", "Chocolate Cake", "Seasonal"),
        }.Select(p => new { Type = "PUT", Id = p.Item1, Document = new Dictionary<string, object> { ["Name"] = p.Item2, ["Title"] = p.Item3, ["@metadata"] = new Dictionary<string, object> { ["@collection"] = "Products" } } });
        using var response = await client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(JsonSerializer.Serialize(new { Commands = commands })));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private static async Task PutIndexAsync(HttpClient client, string db, string fields, string name = "Products/Search")
    {
        var body = "{\"Indexes\":[{\"Name\":\"" + name + "\",\"Maps\":[\"map('Products', p => ({ Name: p.Name, Title: p.Title, Plain: p.Name }))\"],\"Fields\":" + fields + "}]}";
        using var response = await client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(body));
        Assert.True(response.StatusCode == HttpStatusCode.Created, await response.Content.ReadAsStringAsync());
    }

    private static async Task<List<string>> IdsAsync(HttpClient client, string db, string rql)
    {
        var body = JsonSerializer.Serialize(new { Query = rql, WaitForNonStaleResults = true, WaitForNonStaleResultsTimeout = "00:01:00" });
        using var response = await client.PostAsync($"/databases/{db}/queries", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        return [.. json.GetProperty("Results").EnumerateArray().Select(r => r.GetProperty("@metadata").GetProperty("@id").GetString()!).Order(StringComparer.Ordinal)];
    }

    private static async Task<JsonElement> AnalyzersAsync(HttpClient client, string db, string query = "")
    {
        using var response = await client.GetAsync($"/databases/{db}/analyzers{query}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Analyzers");
    }

    [Fact]
    public async Task AnalyzersArePutListedAndDeletedByName()
    {
        var db = await fixture.CreateDatabaseAsync();
        Assert.Equal(0, (await AnalyzersAsync(Client, db)).GetArrayLength());
        await PutAnalyzersAsync(Client, db, ("Folding", Folding), ("Prefixes", Prefixes), ("Words", "WhitespaceAnalyzer"));

        var listed = await AnalyzersAsync(Client, db);
        Assert.Equal(["Folding", "Prefixes", "Words"], listed.EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
        Assert.Equal(Folding, listed[0].GetProperty("Code").GetString());
        var names = await AnalyzersAsync(Client, db, "?namesOnly=true");
        Assert.False(names[0].TryGetProperty("Code", out _));

        // A name in another casing replaces the analyzer.
        await PutAnalyzersAsync(Client, db, ("words", "KeywordAnalyzer"));
        listed = await AnalyzersAsync(Client, db);
        Assert.Equal(3, listed.GetArrayLength());
        Assert.Equal(("words", "KeywordAnalyzer"), (listed[2].GetProperty("Name").GetString(), listed[2].GetProperty("Code").GetString()));

        using (var deleted = await Client.DeleteAsync($"/databases/{db}/admin/analyzers?name=WORDS"))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        // As RavenDB: deleting what is not there is not an error.
        using (var again = await Client.DeleteAsync($"/databases/{db}/admin/analyzers?name=Words"))
        {
            Assert.Equal(HttpStatusCode.NoContent, again.StatusCode);
        }
        Assert.Equal(["Folding", "Prefixes"], (await AnalyzersAsync(Client, db)).EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
    }

    [Theory]
    [InlineData("", "InvalidJsonException", "The request body is not valid JSON")]
    [InlineData("{\"Analyzers\":", "InvalidJsonException", "The request body is not valid JSON")]
    [InlineData("[]", "BadRequestException", "The body must be {\"Analyzers\":")]
    [InlineData("{\"Analyzers\":{}}", "BadRequestException", "The body must be")]
    [InlineData("{\"Analyzers\":[]}", "BadRequestException", "\"Analyzers\" is empty")]
    [InlineData("{\"Analyzers\":[{\"Name\":\"A\",\"Code\":\"StandardAnalyzer\"},{\"Name\":\"a\",\"Code\":\"StandardAnalyzer\"}]}", "BadRequestException", "defined more than once")]
    [InlineData("{\"Analyzers\":[42]}", "AnalyzerCompilationException", "each analyzer must be an object")]
    [InlineData("{\"Analyzers\":[{\"Code\":\"StandardAnalyzer\"}]}", "AnalyzerCompilationException", "needs a \"Name\"")]
    [InlineData("{\"Analyzers\":[{\"Name\":\"A\"}]}", "AnalyzerCompilationException", "Analyzer 'A' cannot be built: it needs \"Code\"")]
    [InlineData("{\"Analyzers\":[{\"Name\":\"A\",\"Code\":\"public class A : Analyzer { }\"}]}", "AnalyzerCompilationException", "does not compile analyzer classes")]
    [InlineData("{\"Analyzers\":[{\"Name\":\"A\",\"Code\":\"{\\\"Tokenizer\\\":\\\"Pattern\\\"}\"}]}", "AnalyzerCompilationException", "Allowed tokenizers:")]
    [InlineData("{\"Analyzers\":[{\"Name\":\"StandardAnalyzer\",\"Code\":\"KeywordAnalyzer\"}]}", "AnalyzerCompilationException", "the built-in StandardAnalyzer's")]
    public async Task ABadPutIsRefusedAndStoresNothing(string body, string type, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var request = new HttpRequestMessage(HttpMethod.Put, $"/databases/{db}/admin/analyzers") { Content = new StringContent(body, Encoding.UTF8, "application/json") };
        using var response = await Client.SendAsync(request);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
        Assert.Contains(mentions, message, StringComparison.Ordinal);
        Assert.Equal(0, (await AnalyzersAsync(Client, db)).GetArrayLength());
    }

    [Fact]
    public async Task OneBadAnalyzerStoresNoneOfTheRequest()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/admin/analyzers", Api.Json(AnalyzersBody(("Good", Folding), ("Bad", """{"Tokenizer":"Standard","TokenFilters":["Synonym"]}"""))));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "AnalyzerCompilationException");
        Assert.Contains("Analyzer 'Bad' cannot be built: the token filter 'Synonym' is not one Jackdaw allows", message, StringComparison.Ordinal);
        Assert.Equal(0, (await AnalyzersAsync(Client, db)).GetArrayLength());
    }

    [Fact]
    public async Task ADeleteWithoutANameIsABadRequest()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.DeleteAsync($"/databases/{db}/admin/analyzers");
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Fact]
    public async Task AFieldsAnalyzerIndexesItsValuesAndAnalyzesSearchTerms()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutProductsAsync(Client, db);
        await PutAnalyzersAsync(Client, db, ("Folding", Folding), ("Prefixes", Prefixes));
        // Name names an analyzer without an Indexing: as in RavenDB, that makes it a Search field.
        await PutIndexAsync(Client, db, """{"Name":{"Analyzer":"Folding"},"Title":{"Indexing":"Search","Analyzer":"Prefixes"},"Plain":{"Indexing":"Search"}}""");

        // Folded on both sides: "creme" finds "Crème", and "CRÈME" finds "creme".
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Name, 'creme')"));
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Name, 'CRÈME')"));
        Assert.Equal(["products/1"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Name, 'brulee')"));
        // The default analyzer does not fold.
        Assert.Equal(["products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Plain, 'creme')"));
        // A wildcard word goes through the field's analyzer when it stays one token.
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Name, 'CRÈ*')"));

        // Edge n-grams: a word's beginning finds it; every n-gram of the query word must be there.
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Title, 'bes')"));
        Assert.Equal(["products/1"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Title, 'bestsel')"));
        Assert.Equal(["products/1", "products/2", "products/3"], await IdsAsync(Client, db, "from index 'Products/Search' where search(Title, 'bestsel val seas')"));
        Assert.Empty(await IdsAsync(Client, db, "from index 'Products/Search' where search(Title, 'val yea', and)"));
        Assert.Empty(await IdsAsync(Client, db, "from index 'Products/Search' where search(Title, 'sel')"));

        // As RavenDB: equality compares the lowercased value with the field's terms, without the analyzer.
        Assert.Empty(await IdsAsync(Client, db, "from index 'Products/Search' where Name = 'Crème Brûlée'"));
        Assert.Equal(["products/2"], await IdsAsync(Client, db, "from index 'Products/Search' where Name = 'caramel'"));

        using var response = await Client.GetAsync($"/databases/{db}/indexes?name=Products/Search");
        var fields = (await Api.JsonAsync(response)).GetProperty("Results")[0].GetProperty("Fields");
        Assert.Equal("Search", fields.GetProperty("Name").GetProperty("Indexing").GetString());
        Assert.Equal("Folding", fields.GetProperty("Name").GetProperty("Analyzer").GetString());
        Assert.False(fields.GetProperty("Plain").TryGetProperty("Analyzer", out _));
    }

    [Theory]
    [InlineData("WhitespaceAnalyzer", "Crème", "products/1", "crème")]
    [InlineData("Lucene.Net.Analysis.Core.WhitespaceAnalyzer", "Crème", "products/1", "crème")]
    [InlineData("Lucene.Net.Analysis.WhitespaceAnalyzer", "Crème", "products/1", "crème")]
    [InlineData("StandardAnalyzer", "crème", "products/1", null)]
    [InlineData("Lucene.Net.Analysis.Standard.StandardAnalyzer", "CRÈME", "products/1", null)]
    [InlineData("KeywordAnalyzer", "Chocolate", null, "Chocolate")]
    [InlineData("SimpleAnalyzer", "CAKE", "products/3", null)]
    [InlineData("StopAnalyzer", "chocolate", "products/3", null)]
    public async Task AFieldMayNameABuiltInLuceneAnalyzer(string analyzer, string word, string? found, string? notFound)
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutProductsAsync(Client, db);
        await PutIndexAsync(Client, db, "{\"Name\":{\"Indexing\":\"Search\",\"Analyzer\":\"" + analyzer + "\"}}");
        var rql = "from index 'Products/Search' where search(Name, $w)";
        var ids = await IdsAsync(Client, db, rql.Replace("$w", "'" + word + "'", StringComparison.Ordinal));
        if (found is not null)
        {
            Assert.Contains(found, ids);
        }
        else
        {
            Assert.Empty(ids);
        }
        if (notFound is not null)
        {
            Assert.Empty(await IdsAsync(Client, db, rql.Replace("$w", "'" + notFound + "'", StringComparison.Ordinal)));
        }
    }

    [Fact]
    public async Task AnUnknownAnalyzerNameIsAnIndexCompilationError()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAnalyzersAsync(Client, db, ("Folding", Folding));
        using var response = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(
            "{\"Indexes\":[{\"Name\":\"Broken\",\"Maps\":[\"map('Products', p => ({ Name: p.Name }))\"],\"Fields\":{\"Name\":{\"Indexing\":\"Exact\",\"Analyzer\":\"foo bar\"}}}]}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "IndexCompilationException");
        // RavenDB's words, then what there is to choose from.
        Assert.Contains("Cannot find analyzer type 'foo bar' for field: Name", message, StringComparison.Ordinal);
        Assert.Contains("StandardAnalyzer, WhitespaceAnalyzer", message, StringComparison.Ordinal);
        Assert.Contains("(Folding;", message, StringComparison.Ordinal);
        using var indexes = await Client.GetAsync($"/databases/{db}/indexes");
        Assert.Equal(0, (await Api.JsonAsync(indexes)).GetProperty("Results").GetArrayLength());

        using var badType = await Client.PutAsync($"/databases/{db}/admin/indexes", Api.Json(
            "{\"Indexes\":[{\"Name\":\"Broken\",\"Maps\":[\"map('Products', p => ({ Name: p.Name }))\"],\"Fields\":{\"Name\":{\"Analyzer\":42}}}]}"));
        await Api.AssertErrorAsync(badType, HttpStatusCode.BadRequest, "BadRequestException");

        using var test = await Client.PostAsync($"/databases/{db}/indexes/test", Api.Json(
            "{\"IndexDefinition\":{\"Name\":\"T\",\"Maps\":[\"map('Products', p => ({ Name: p.Name }))\"],\"Fields\":{\"Name\":{\"Analyzer\":\"Nope\"}}}}"));
        Assert.Contains("Cannot find analyzer type 'Nope' for field: Name", await Api.AssertErrorAsync(test, HttpStatusCode.BadRequest, "IndexCompilationException"), StringComparison.Ordinal);
    }

    [Fact]
    public async Task AnIndexTestUsesTheFieldsAnalyzer()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutProductsAsync(Client, db);
        await PutAnalyzersAsync(Client, db, ("Folding", Folding));
        using var response = await Client.PostAsync($"/databases/{db}/indexes/test", Api.Json(
            "{\"IndexDefinition\":{\"Name\":\"T\",\"Maps\":[\"map('Products', p => ({ Name: p.Name }))\"],\"Fields\":{\"Name\":{\"Analyzer\":\"Folding\"}}},\"Query\":\"from index 'T' where search(Name, 'brulee')\"}"));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        Assert.Equal("products/1", Assert.Single(json.GetProperty("QueryResults").EnumerateArray()).GetProperty("@metadata").GetProperty("@id").GetString());
    }

    [Fact]
    public async Task AnAnalyzerAnIndexNamesIsNotDeleted()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAnalyzersAsync(Client, db, ("Folding", Folding));
        // Named by a field whose indexing does not use it: still needed to open the index.
        await PutIndexAsync(Client, db, """{"Name":{"Indexing":"Exact","Analyzer":"Folding"}}""", "A");
        await PutIndexAsync(Client, db, """{"Name":{"Analyzer":"folding"}}""", "B");

        using (var refused = await Client.DeleteAsync($"/databases/{db}/admin/analyzers?name=Folding"))
        {
            var message = await Api.AssertErrorAsync(refused, HttpStatusCode.Conflict, "AnalyzerInUseException");
            Assert.Contains("Analyzer 'Folding' is used by the indexes 'A', 'B'", message, StringComparison.Ordinal);
        }
        Assert.Equal(1, (await AnalyzersAsync(Client, db)).GetArrayLength());

        foreach (var index in new[] { "A", "B" })
        {
            using var deleted = await Client.DeleteAsync($"/databases/{db}/indexes?name={index}");
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        using (var ok = await Client.DeleteAsync($"/databases/{db}/admin/analyzers?name=Folding"))
        {
            Assert.Equal(HttpStatusCode.NoContent, ok.StatusCode);
        }
    }

    [Fact]
    public async Task AChangedAnalyzerRebuildsTheIndexesUsingItAndNoOthers()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutProductsAsync(Client, db);
        await PutAnalyzersAsync(Client, db, ("Folding", Folding), ("Prefixes", Prefixes));
        await PutIndexAsync(Client, db, """{"Name":{"Analyzer":"Folding"}}""", "UsesFolding");
        await PutIndexAsync(Client, db, """{"Title":{"Analyzer":"Prefixes"},"Name":{"Indexing":"Exact","Analyzer":"Folding"}}""", "UsesPrefixes");
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'UsesFolding' where search(Name, 'creme')"));
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'UsesPrefixes' where search(Title, 'be')"));

        // The same recipe written another way is no change.
        await PutAnalyzersAsync(Client, db, ("Folding", """{ "tokenizer": "WhitespaceTokenizer", "tokenFilters": ["lowercase", "ASCIIFoldingFilter"] }"""));
        Assert.DoesNotContain(fixture.Server.Logs.Records, r => r.Message.Contains("of database " + db + " uses a changed analyzer", StringComparison.Ordinal));

        // Without folding: the index that searches with it is rebuilt (its terms and its queries
        // agree again); the one that only names it on an Exact field is not.
        await PutAnalyzersAsync(Client, db, ("Folding", """{"Tokenizer":"Whitespace","TokenFilters":["LowerCase"]}"""));
        Assert.Equal(["products/2"], await IdsAsync(Client, db, "from index 'UsesFolding' where search(Name, 'creme')"));
        Assert.Equal(["products/1"], await IdsAsync(Client, db, "from index 'UsesFolding' where search(Name, 'crème')"));
        Assert.Single(fixture.Server.Logs.Records, r => r.Message.Contains("Index UsesFolding of database " + db + " uses a changed analyzer (folding)", StringComparison.Ordinal));
        Assert.DoesNotContain(fixture.Server.Logs.Records, r => r.Message.Contains("Index UsesPrefixes of database " + db + " uses a changed analyzer", StringComparison.Ordinal));
        Assert.Equal(["products/1", "products/2"], await IdsAsync(Client, db, "from index 'UsesPrefixes' where search(Title, 'be')"));
    }

    [Fact]
    public async Task AnalyzersAndTheIndexesUsingThemSurviveARestartWithoutReindexing()
    {
        using var data = new TempFolder();
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using (await server.Client.PutAsync("/admin/databases?name=Keep", null))
            {
            }
            await PutProductsAsync(server.Client, "Keep");
            await PutAnalyzersAsync(server.Client, "Keep", ("Folding", Folding), ("Prefixes", Prefixes));
            await PutIndexAsync(server.Client, "Keep", """{"Name":{"Analyzer":"Folding"},"Title":{"Analyzer":"Prefixes"}}""");
            Assert.Equal(["products/1"], await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Name, 'brulee')"));
        }

        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            var listed = await AnalyzersAsync(server.Client, "Keep");
            Assert.Equal(["Folding", "Prefixes"], listed.EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
            Assert.Equal(Prefixes, listed[1].GetProperty("Code").GetString());
            Assert.Equal(["products/1"], await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Name, 'brulee')"));
            Assert.Equal(["products/1"], await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Title, 'bestsel')"));
            using var stats = await server.Client.GetAsync("/databases/Keep/indexes/stats");
            // The files were kept: the analyzers they were written with are the ones it opened with.
            Assert.Equal(0, (await Api.JsonAsync(stats)).GetProperty("Results")[0].GetProperty("DocumentsMappedSinceOpen").GetInt64());

            // A crash between storing a changed analyzer and rebuilding its index: the analyzer is
            // stored without the rebuild. The next open finds files written with the old recipe.
            var database = server.Host.Server.Databases.GetDatabase("Keep");
            var changed = new Jackdaw.Server.Indexing.Analysis.AnalyzerDefinition("Folding", "WhitespaceAnalyzer");
            await Jackdaw.Server.Indexing.IndexStore.Of(database).Analyzers.StoreAsync([(changed, Jackdaw.Server.Indexing.Analysis.AnalyzerRecipe.Parse(changed.Name, changed.Code))]);
        }

        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            Assert.Equal("WhitespaceAnalyzer", (await AnalyzersAsync(server.Client, "Keep"))[0].GetProperty("Code").GetString());
            // Rebuilt with the stored recipe (case kept, nothing folded), not read with the wrong one.
            Assert.Equal(["products/1"], await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Name, 'Brûlée')"));
            Assert.Empty(await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Name, 'brûlée')"));
            Assert.Empty(await IdsAsync(server.Client, "Keep", "from index 'Products/Search' where search(Name, 'brulee')"));
            using var stats = await server.Client.GetAsync("/databases/Keep/indexes/stats");
            Assert.Equal(3, (await Api.JsonAsync(stats)).GetProperty("Results")[0].GetProperty("DocumentsMappedSinceOpen").GetInt64());
        }
    }
}
