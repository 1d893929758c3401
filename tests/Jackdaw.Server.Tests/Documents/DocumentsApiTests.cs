using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

public partial class DocumentsApiTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [GeneratedRegex(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$")]
    private static partial Regex IsoUtc();

    private static string Docs(string db, string id) => $"/databases/{db}/docs?id={Uri.EscapeDataString(id)}";

    private async Task<(string Id, string ChangeVector)> PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync(Docs(db, id), Api.Json(json));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.Created, body.ToString());
        var changeVector = body.GetProperty("ChangeVector").GetString()!;
        Assert.Equal($"\"{changeVector}\"", response.Headers.ETag!.ToString());
        return (body.GetProperty("Id").GetString()!, changeVector);
    }

    private async Task<JsonElement> GetOneAsync(string db, string id)
    {
        using var response = await Client.GetAsync(Docs(db, id));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        return body.GetProperty("Results")[0];
    }

    [Fact]
    public async Task PutThenGetRoundTripsTheDocumentWithStampedMetadata()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (id, changeVector) = await PutAsync(db, "users/1", """{"Name":"Ada","Age":36,"Tags":["a","b"],"Address":{"City":"London"},"@metadata":{"@collection":"Users","Custom":"kept"}}""");
        Assert.Equal("users/1", id);
        Assert.Matches("^A:[0-9]+-.+$", changeVector);

        using var response = await Client.GetAsync(Docs(db, "users/1"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        var body = await Api.JsonAsync(response);
        Assert.Equal(JsonValueKind.Object, body.GetProperty("Includes").ValueKind);
        var doc = body.GetProperty("Results")[0];
        Assert.Equal("Ada", doc.GetProperty("Name").GetString());
        Assert.Equal(36, doc.GetProperty("Age").GetInt32());
        Assert.Equal("London", doc.GetProperty("Address").GetProperty("City").GetString());
        var metadata = doc.GetProperty("@metadata");
        Assert.Equal("users/1", metadata.GetProperty("@id").GetString());
        Assert.Equal(changeVector, metadata.GetProperty("@change-vector").GetString());
        Assert.Equal("Users", metadata.GetProperty("@collection").GetString());
        Assert.Equal("kept", metadata.GetProperty("Custom").GetString());
        Assert.Matches(IsoUtc(), metadata.GetProperty("@last-modified").GetString()!);
        // Property order is the order written.
        Assert.Equal(["Name", "Age", "Tags", "Address", "@metadata"], doc.EnumerateObject().Select(p => p.Name).ToArray());
    }

    [Fact]
    public async Task IdsAreCaseInsensitiveAndKeepTheirFirstCasing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "Users/ABC", """{"V":1}""");
        var (id, _) = await PutAsync(db, "users/abc", """{"V":2}""");
        Assert.Equal("Users/ABC", id);
        var doc = await GetOneAsync(db, "USERS/abc");
        Assert.Equal(2, doc.GetProperty("V").GetInt32());
        Assert.Equal("Users/ABC", doc.GetProperty("@metadata").GetProperty("@id").GetString());
    }

    [Theory]
    [InlineData("città/ünïcode")]
    [InlineData("日本/文書/1")]
    [InlineData("emoji/😀")]
    [InlineData("with space/and+plus&amp=1")]
    public async Task UnicodeAndReservedCharactersInIdsRoundTrip(string id)
    {
        var db = await fixture.CreateDatabaseAsync();
        var (stored, _) = await PutAsync(db, id, """{"V":"x"}""");
        Assert.Equal(id, stored);
        var doc = await GetOneAsync(db, id.ToUpperInvariant());
        Assert.Equal(id, doc.GetProperty("@metadata").GetProperty("@id").GetString());
    }

    [Fact]
    public async Task IdsEndingInSlashGetUniqueSortableSuffixes()
    {
        var db = await fixture.CreateDatabaseAsync();
        var ids = new List<string>();
        for (var i = 0; i < 5; i++)
        {
            ids.Add((await PutAsync(db, "orders/", """{"N":1}""")).Id);
        }
        Assert.All(ids, id => Assert.StartsWith("orders/", id, StringComparison.Ordinal));
        Assert.Equal(ids.Count, ids.Distinct().Count());
        Assert.Equal(ids, ids.Order(StringComparer.Ordinal).ToList());
        await GetOneAsync(db, ids[2]);
    }

    [Fact]
    public async Task IdsEndingInPipeGetTheNextIdentityPerPrefix()
    {
        var db = await fixture.CreateDatabaseAsync();
        Assert.Equal("invoices/1", (await PutAsync(db, "invoices|", "{}")).Id);
        Assert.Equal("invoices/2", (await PutAsync(db, "invoices|", "{}")).Id);
        Assert.Equal("orders/1", (await PutAsync(db, "orders|", "{}")).Id);
        // The prefix is matched case-insensitively; the id keeps the casing given.
        Assert.Equal("Invoices/3", (await PutAsync(db, "Invoices|", "{}")).Id);
    }

    [Fact]
    public async Task LoadingSeveralIdsGivesNullForMissingOnesAndASingleMissingIdIs404()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "a", """{"N":"a"}""");
        await PutAsync(db, "c", """{"N":"c"}""");
        using (var response = await Client.GetAsync($"/databases/{db}/docs?id=a&id=b&id=c"))
        {
            var results = (await Api.JsonAsync(response)).GetProperty("Results");
            Assert.Equal(3, results.GetArrayLength());
            Assert.Equal("a", results[0].GetProperty("N").GetString());
            Assert.Equal(JsonValueKind.Null, results[1].ValueKind);
            Assert.Equal("c", results[2].GetProperty("N").GetString());
        }
        using (var missing = await Client.GetAsync(Docs(db, "b")))
        {
            await Api.AssertErrorAsync(missing, HttpStatusCode.NotFound, "DocumentDoesNotExistException");
        }
    }

    [Fact]
    public async Task PagingByPrefixIsInIdOrderAndWithoutIdsByEtagNewestFirst()
    {
        var db = await fixture.CreateDatabaseAsync();
        foreach (var id in new[] { "users/3", "users/1", "companies/1", "users/2", "Users/4" })
        {
            await PutAsync(db, id, "{}");
        }

        async Task<string[]> IdsAsync(string query)
        {
            using var response = await Client.GetAsync($"/databases/{db}/docs{query}");
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            return (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray()
                .Select(d => d.GetProperty("@metadata").GetProperty("@id").GetString()!).ToArray();
        }

        Assert.Equal(["users/1", "users/2", "users/3", "Users/4"], await IdsAsync("?startsWith=users/"));
        Assert.Equal(["users/2", "users/3"], await IdsAsync("?startsWith=USERS/&start=1&pageSize=2"));
        Assert.Equal(["Users/4", "users/2", "companies/1", "users/1", "users/3"], await IdsAsync(string.Empty));
        Assert.Equal(["companies/1", "users/1"], await IdsAsync("?start=2&pageSize=2"));
        Assert.Empty(await IdsAsync("?pageSize=0"));
        Assert.Empty(await IdsAsync("?startsWith=users/&pageSize=0"));
        using var bad = await Client.GetAsync($"/databases/{db}/docs?pageSize=lots");
        await Api.AssertErrorAsync(bad, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Fact]
    public async Task HeadAndIfNoneMatchAnswerWithETagsAnd304()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (_, changeVector) = await PutAsync(db, "x", """{"A":1}""");

        using (var head = await Client.SendAsync(Api.Request(HttpMethod.Head, Docs(db, "x"))))
        {
            Assert.Equal(HttpStatusCode.OK, head.StatusCode);
            Assert.Equal($"\"{changeVector}\"", head.Headers.ETag!.ToString());
        }
        using (var head = await Client.SendAsync(Api.Request(HttpMethod.Head, Docs(db, "x"), ifNoneMatch: $"\"{changeVector}\"")))
        {
            Assert.Equal(HttpStatusCode.NotModified, head.StatusCode);
        }
        using (var head = await Client.SendAsync(Api.Request(HttpMethod.Head, Docs(db, "nope"))))
        {
            Assert.Equal(HttpStatusCode.NotFound, head.StatusCode);
        }
        using (var get = await Client.SendAsync(Api.Request(HttpMethod.Get, Docs(db, "x"), ifNoneMatch: $"\"{changeVector}\"")))
        {
            Assert.Equal(HttpStatusCode.NotModified, get.StatusCode);
            Assert.Empty(await get.Content.ReadAsByteArrayAsync());
        }
        using (var get = await Client.SendAsync(Api.Request(HttpMethod.Get, Docs(db, "x"), ifNoneMatch: "\"A:1-other\"")))
        {
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        }
    }

    [Fact]
    public async Task IfMatchGuardsPutAndDelete()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (_, first) = await PutAsync(db, "doc", """{"V":1}""");
        var (_, second) = await PutAsync(db, "doc", """{"V":2}""");
        Assert.NotEqual(first, second);

        using (var stale = await Client.SendAsync(Api.Request(HttpMethod.Put, Docs(db, "doc"), """{"V":3}""", ifMatch: $"\"{first}\"")))
        {
            await Api.AssertErrorAsync(stale, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        using (var fresh = await Client.SendAsync(Api.Request(HttpMethod.Put, Docs(db, "doc"), """{"V":3}""", ifMatch: $"\"{second}\"")))
        {
            Assert.Equal(HttpStatusCode.Created, fresh.StatusCode);
        }
        Assert.Equal(3, (await GetOneAsync(db, "doc")).GetProperty("V").GetInt32());

        using (var absent = await Client.SendAsync(Api.Request(HttpMethod.Put, Docs(db, "absent"), "{}", ifMatch: $"\"{second}\"")))
        {
            await Api.AssertErrorAsync(absent, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        using (var staleDelete = await Client.SendAsync(Api.Request(HttpMethod.Delete, Docs(db, "doc"), ifMatch: $"\"{first}\"")))
        {
            await Api.AssertErrorAsync(staleDelete, HttpStatusCode.Conflict, "ConcurrencyException");
        }

        using (var delete = await Client.DeleteAsync(Docs(db, "doc")))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }
        using (var again = await Client.DeleteAsync(Docs(db, "doc")))
        {
            Assert.Equal(HttpStatusCode.NoContent, again.StatusCode);
        }
        using (var gone = await Client.GetAsync(Docs(db, "doc")))
        {
            Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
        }
    }

    [Fact]
    public async Task AnEmptyChangeVectorMeansTheDocumentMustNotExist()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var created = await Client.SendAsync(Api.Request(HttpMethod.Put, Docs(db, "new"), "{}", ifMatch: "\"\"")))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }
        using (var again = await Client.SendAsync(Api.Request(HttpMethod.Put, Docs(db, "new"), "{}", ifMatch: "\"\"")))
        {
            await Api.AssertErrorAsync(again, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        var body = """{"Commands":[{"Type":"PUT","Id":"fresh","Document":{},"ChangeVector":""},{"Type":"PUT","Id":"new","Document":{},"ChangeVector":""}]}""";
        using (var batch = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body)))
        {
            await Api.AssertErrorAsync(batch, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        using (var fresh = await Client.GetAsync(Docs(db, "fresh")))
        {
            Assert.Equal(HttpStatusCode.NotFound, fresh.StatusCode);
        }
    }

    [Fact]
    public async Task BulkDocsAppliesEveryCommandInOneTransaction()
    {
        var db = await fixture.CreateDatabaseAsync();
        var (_, cv) = await PutAsync(db, "old", """{"V":0}""");
        var body = """
            {"Commands":[
              {"Type":"PUT","Id":"a","Document":{"V":1,"@metadata":{"@collection":"Things"}},"ChangeVector":null},
              {"Type":"PUT","Id":"things/","Document":{"V":2,"@metadata":{"@collection":"Things"}}},
              {"Type":"DELETE","Id":"old","ChangeVector":"CV"},
              {"Type":"DELETE","Id":"never-existed"}
            ]}
            """.Replace("CV", cv, StringComparison.Ordinal);
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body));
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        var results = json.GetProperty("Results");
        Assert.Equal(4, results.GetArrayLength());
        Assert.Equal("PUT", results[0].GetProperty("Type").GetString());
        // RavenDB's shape: a PUT answers with the stored metadata's keys, a DELETE with Id and Deleted.
        Assert.Equal("a", results[0].GetProperty("@id").GetString());
        Assert.Equal("Things", results[0].GetProperty("@collection").GetString());
        Assert.Matches(IsoUtc(), results[0].GetProperty("@last-modified").GetString());
        Assert.StartsWith("things/", results[1].GetProperty("@id").GetString(), StringComparison.Ordinal);
        Assert.Equal("old", results[2].GetProperty("Id").GetString());
        Assert.True(results[2].GetProperty("Deleted").GetBoolean());
        Assert.False(results[3].GetProperty("Deleted").GetBoolean());

        // The commands share one transaction: consecutive etags.
        var etagA = long.Parse(results[0].GetProperty("@change-vector").GetString()!.Split(':', '-')[1]);
        var etagB = long.Parse(results[1].GetProperty("@change-vector").GetString()!.Split(':', '-')[1]);
        Assert.Equal(etagA + 1, etagB);
        using var old = await Client.GetAsync(Docs(db, "old"));
        Assert.Equal(HttpStatusCode.NotFound, old.StatusCode);
    }

    [Fact]
    public async Task BulkDocsWithAConflictAppliesNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "guarded", """{"V":0}""");
        var body = """
            {"Commands":[
              {"Type":"PUT","Id":"first","Document":{"V":1}},
              {"Type":"DELETE","Id":"guarded","ChangeVector":"A:999-nope"},
              {"Type":"PUT","Id":"second","Document":{"V":2}}
            ]}
            """;
        using (var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body)))
        {
            await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "ConcurrencyException");
        }
        using (var first = await Client.GetAsync(Docs(db, "first")))
        {
            Assert.Equal(HttpStatusCode.NotFound, first.StatusCode);
        }
        await GetOneAsync(db, "guarded");
    }

    [Theory]
    [InlineData("""{"Commands":[{"Type":"PATCH","Id":"a"}]}""", "PATCH")]
    [InlineData("""{"Commands":[{"Type":"PUT","Id":"a"}]}""", "Document")]
    [InlineData("""{"Commands":[{"Type":"PUT","Document":{}}]}""", "Id")]
    [InlineData("""{"Commands":[{"Type":"PUT","Id":"","Document":{}}]}""", "empty")]
    [InlineData("""{"Commands":[{"Type":"PUT","Id":"a","Document":[1]}]}""", "object")]
    [InlineData("""{"Commands":{}}""", "array")]
    [InlineData("""{"Nothing":[]}""", "Commands")]
    [InlineData("""[]""", "object")]
    [InlineData("""{"Commands":[{"Type":"PUT","Id":"a","Document":{"x":}}]}""", "")]
    [InlineData("", "empty")]
    public async Task MalformedBulkDocsIs400NamingTheProblem(string body, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body));
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        var json = await Api.JsonAsync(response);
        Assert.Contains(mentions, json.GetProperty("Message").GetString()!, StringComparison.OrdinalIgnoreCase);
        using var stats = await Client.GetAsync($"/databases/{db}/stats");
        Assert.Equal(0, (await Api.JsonAsync(stats)).GetProperty("CountOfDocuments").GetInt64());
    }

    [Theory]
    [InlineData(new byte[] { 0xC3, 0x28 })]
    [InlineData(new byte[] { (byte)'\\', (byte)'u', (byte)'d', (byte)'8', (byte)'0', (byte)'0' })]
    public async Task BadStringsInTheBatchEnvelopeAre400(byte[] badId)
    {
        var db = await fixture.CreateDatabaseAsync();
        byte[] Body(string before, string after) => [.. Encoding.UTF8.GetBytes(before), .. badId, .. Encoding.UTF8.GetBytes(after)];
        using (var bulk = await Client.PostAsync($"/databases/{db}/bulk_docs", new ByteArrayContent(Body("""{"Commands":[{"Type":"PUT","Id":"a""", "\",\"Document\":{}}]}"))))
        {
            await Api.AssertErrorAsync(bulk, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var insert = await Client.PostAsync($"/databases/{db}/bulk_insert", new ByteArrayContent(Body("""{"Id":"a""", "\",\"Document\":{}}\n"))))
        {
            await Api.AssertErrorAsync(insert, HttpStatusCode.BadRequest, "BadRequestException");
        }
    }

    [Fact]
    public async Task CollectionCountsSumEveryChangeOfOneTransaction()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "gone/1", """{"@metadata":{"@collection":"Gone"}}""");
        // One bulk_docs request is one transaction: counts change per document but are written once.
        const string body = """
            {"Commands":[
              {"Type":"PUT","Id":"a","Document":{"@metadata":{"@collection":"Users"}}},
              {"Type":"PUT","Id":"b","Document":{"@metadata":{"@collection":"Users"}}},
              {"Type":"PUT","Id":"c","Document":{"@metadata":{"@collection":"users"}}},
              {"Type":"DELETE","Id":"a"},
              {"Type":"PUT","Id":"b","Document":{"@metadata":{"@collection":"Orders"}}},
              {"Type":"PUT","Id":"d","Document":{"@metadata":{"@collection":"Temp"}}},
              {"Type":"DELETE","Id":"d"},
              {"Type":"DELETE","Id":"gone/1"}
            ]}
            """;
        using (var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json(body)))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        using (var response = await Client.GetAsync($"/databases/{db}/collections/stats"))
        {
            var json = await Api.JsonAsync(response);
            Assert.Equal(2, json.GetProperty("CountOfDocuments").GetInt64());
            var collections = json.GetProperty("Collections");
            Assert.Equal(1, collections.GetProperty("Users").GetInt64());
            Assert.Equal(1, collections.GetProperty("Orders").GetInt64());
            Assert.False(collections.TryGetProperty("Temp", out _));
            Assert.False(collections.TryGetProperty("Gone", out _));
            Assert.Equal(2, collections.EnumerateObject().Count());
        }
    }

    [Fact]
    public async Task CollectionsAreCountedAndPagedNewestFirst()
    {
        var db = await fixture.CreateDatabaseAsync();
        for (var i = 1; i <= 3; i++)
        {
            await PutAsync(db, $"users/{i}", $$$"""{"N":{{{i}}},"@metadata":{"@collection":"Users"}}""");
        }
        await PutAsync(db, "orders/1", """{"@metadata":{"@collection":"Orders"}}""");
        await PutAsync(db, "loose", "{}");
        // Moving a document to another collection moves its count.
        await PutAsync(db, "users/3", """{"N":3,"@metadata":{"@collection":"Orders"}}""");

        using (var response = await Client.GetAsync($"/databases/{db}/collections/stats"))
        {
            var json = await Api.JsonAsync(response);
            Assert.Equal(5, json.GetProperty("CountOfDocuments").GetInt64());
            Assert.Equal(2, json.GetProperty("Collections").GetProperty("Users").GetInt64());
            Assert.Equal(2, json.GetProperty("Collections").GetProperty("Orders").GetInt64());
        }
        using (var response = await Client.GetAsync($"/databases/{db}/collections/docs?name=users"))
        {
            var ids = (await Api.JsonAsync(response)).GetProperty("Results").EnumerateArray().Select(d => d.GetProperty("N").GetInt32()).ToArray();
            Assert.Equal([2, 1], ids);
        }
        using (var response = await Client.GetAsync($"/databases/{db}/collections/docs?name=Orders&start=1&pageSize=5"))
        {
            Assert.Equal(1, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }
        using (var response = await Client.GetAsync($"/databases/{db}/collections/docs?name=Orders&pageSize=0"))
        {
            Assert.Equal(0, (await Api.JsonAsync(response)).GetProperty("Results").GetArrayLength());
        }

        await Client.DeleteAsync(Docs(db, "users/1"));
        using (var response = await Client.GetAsync($"/databases/{db}/stats"))
        {
            var json = await Api.JsonAsync(response);
            Assert.Equal(4, json.GetProperty("CountOfDocuments").GetInt64());
            // Two tombstones: users/1's delete, and users/3 leaving Users (a reader of the Users
            // feeds must learn it left; the move took an etag for it, before the new version's).
            Assert.Equal(2, json.GetProperty("CountOfTombstones").GetInt64());
            Assert.Equal(1, json.GetProperty("Collections").GetProperty("Users").GetInt64());
            Assert.Equal(8, json.GetProperty("LastDocEtag").GetInt64());
            Assert.True(json.GetProperty("Storage").GetProperty("DataFileBytes").GetInt64() > 0);
        }
    }

    [Fact]
    public async Task ADocumentCreatedAgainKeepsItsTombstoneForConsumersBehindIt()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutAsync(db, "phoenix", "{}");
        await PutAsync(db, "other", "{}");
        using (await Client.DeleteAsync(Docs(db, "phoenix")))
        using (await Client.DeleteAsync(Docs(db, "other")))
        {
        }

        async Task<long> TombstonesAsync()
        {
            using var stats = await Client.GetAsync($"/databases/{db}/stats");
            return (await Api.JsonAsync(stats)).GetProperty("CountOfTombstones").GetInt64();
        }

        Assert.Equal(2, await TombstonesAsync());
        // The delete stays visible to a feed reader that has not reached it (clean-up removes it
        // once every consumer has passed it).
        await PutAsync(db, "PHOENIX", "{}");
        Assert.Equal(2, await TombstonesAsync());
        using (await Client.DeleteAsync(Docs(db, "phoenix")))
        {
        }
        Assert.Equal(3, await TombstonesAsync());
    }

    [Fact]
    public async Task TwentyMegabyteDocumentsStreamInAndOut()
    {
        var db = await fixture.CreateDatabaseAsync();
        var json = new StringBuilder("{\"Items\":[");
        var random = new Random(7);
        for (var i = 0; json.Length < 20_000_000; i++)
        {
            if (i > 0)
            {
                json.Append(',');
            }
            json.Append("{\"N\":").Append(i).Append(",\"Text\":\"").Append(random.Next()).Append(" lorem ipsum dolor sit amet \\n\\\"quoted\\\" ").Append(i * 7).Append("\"}");
        }
        json.Append("],\"@metadata\":{\"@collection\":\"Big\"}}");
        var text = json.ToString();
        await PutAsync(db, "big/1", text);

        using var response = await Client.GetAsync(Docs(db, "big/1"), HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var parsed = await JsonDocument.ParseAsync(await response.Content.ReadAsStreamAsync());
        var doc = parsed.RootElement.GetProperty("Results")[0];
        using var expected = JsonDocument.Parse(text);
        Assert.Equal(expected.RootElement.GetProperty("Items").GetArrayLength(), doc.GetProperty("Items").GetArrayLength());
        var expectedItems = expected.RootElement.GetProperty("Items");
        var items = doc.GetProperty("Items");
        for (var i = 0; i < expectedItems.GetArrayLength(); i += 997)
        {
            Assert.Equal(expectedItems[i].GetProperty("Text").GetString(), items[i].GetProperty("Text").GetString());
        }
    }

    [Fact]
    public async Task SixtyFourParallelWritersLeaveExactContents()
    {
        var db = await fixture.CreateDatabaseAsync();
        const int Writers = 64, PerWriter = 20;
        await Parallel.ForAsync(0, Writers, new ParallelOptions { MaxDegreeOfParallelism = Writers }, async (w, _) =>
        {
            for (var i = 0; i < PerWriter; i++)
            {
                // Every writer also rewrites one shared document: the last write of each wins.
                await PutAsync(db, $"w{w}/{i}", $$$"""{"Writer":{{{w}}},"I":{{{i}}},"@metadata":{"@collection":"Writes"}}""");
            }
        });

        using (var stats = await Client.GetAsync($"/databases/{db}/stats"))
        {
            var json = await Api.JsonAsync(stats);
            Assert.Equal(Writers * PerWriter, json.GetProperty("CountOfDocuments").GetInt64());
            Assert.Equal(Writers * PerWriter, json.GetProperty("LastDocEtag").GetInt64());
            Assert.Equal(Writers * PerWriter, json.GetProperty("Collections").GetProperty("Writes").GetInt64());
            // Merging happened: fewer transactions than writes.
            Assert.True(json.GetProperty("MergedTransactions").GetInt64() < Writers * PerWriter);
        }
        for (var w = 0; w < Writers; w += 7)
        {
            var doc = await GetOneAsync(db, $"w{w}/{PerWriter - 1}");
            Assert.Equal(w, doc.GetProperty("Writer").GetInt32());
            Assert.Equal(PerWriter - 1, doc.GetProperty("I").GetInt32());
        }
    }

    [Fact]
    public async Task BulkInsertStreamsLinesAndCommitsThemAll()
    {
        var db = await fixture.CreateDatabaseAsync();
        var lines = new StringBuilder();
        for (var i = 0; i < 5000; i++)
        {
            lines.Append("{\"Id\":\"items/" + i + "\",\"Document\":{\"N\":" + i + ",\"@metadata\":{\"@collection\":\"Items\"}}}").Append('\n');
        }
        lines.Append("\n{\"Id\":\"items/\",\"Document\":{\"Last\":true}}");
        using var content = new StringContent(lines.ToString(), Encoding.UTF8, "application/x-ndjson");
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert", content);
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.OK, json.ToString());
        Assert.Equal(5001, json.GetProperty("Count").GetInt64());
        using var stats = await Client.GetAsync($"/databases/{db}/collections/stats");
        Assert.Equal(5000, (await Api.JsonAsync(stats)).GetProperty("Collections").GetProperty("Items").GetInt64());
        Assert.Equal(4321, (await GetOneAsync(db, "items/4321")).GetProperty("N").GetInt32());
    }

    [Fact]
    public async Task BulkInsertStopsAtABadLineAndSaysWhatWasCommitted()
    {
        var db = await fixture.CreateDatabaseAsync();
        var lines = new StringBuilder();
        for (var i = 0; i < 3000; i++)
        {
            lines.Append($$$"""{"Id":"items/{{{i}}}","Document":{"N":{{{i}}}}}""").Append('\n');
        }
        lines.Append("{\"Id\":\"broken\",\"Document\":{\"N\":}\n");
        for (var i = 3000; i < 3010; i++)
        {
            lines.Append($$$"""{"Id":"items/{{{i}}}","Document":{"N":{{{i}}}}}""").Append('\n');
        }
        using var content = new StringContent(lines.ToString(), Encoding.UTF8, "application/x-ndjson");
        using var response = await Client.PostAsync($"/databases/{db}/bulk_insert", content);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("line 3001", message, StringComparison.Ordinal);
        var committed = long.Parse(Regex.Match(message, @"(\d+) document\(s\) were committed").Groups[1].Value);

        using var stats = await Client.GetAsync($"/databases/{db}/stats");
        Assert.Equal(committed, (await Api.JsonAsync(stats)).GetProperty("CountOfDocuments").GetInt64());
        Assert.True(committed % 1024 == 0 && committed < 3000, $"committed {committed}: whole batches only");
        using var after = await Client.GetAsync(Docs(db, "items/3005"));
        Assert.Equal(HttpStatusCode.NotFound, after.StatusCode);
    }

    [Fact]
    public async Task BodiesOverTheLimitAre413()
    {
        var db = await fixture.CreateDatabaseAsync();
        var huge = "{\"a\":\"" + new string('x', 70 * 1024 * 1024) + "\"}";
        // Expect: 100-continue lets the server refuse before the client sends 70 MB.
        using var request = new HttpRequestMessage(HttpMethod.Put, Docs(db, "huge")) { Content = Api.Json(huge) };
        request.Headers.ExpectContinue = true;
        using var response = await Client.SendAsync(request);
        await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
        await PutAsync(db, "small", "{}");
    }
}
