using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Imports of dumps made by hand: entries the importer must refuse are reported and the rest
/// imported; a body that is no dump is a 400 before anything starts; a dump that breaks midway
/// faults its operation with an error naming the byte; and a dump as RavenDB writes it, with its
/// metadata, attachments' raw bytes and sections Jackdaw does not have, imports.
/// </summary>
public sealed class SmugglerImportTests(SmugglerClient.Fixture fixture) : IClassFixture<SmugglerClient.Fixture>
{
    private HttpClient Client => fixture.Client;

    [Fact]
    public async Task EntriesThatAreNoValidDocumentAreReportedAndTheRestImported()
    {
        var db = await fixture.CreateDatabaseAsync();
        var dump = SmugglerClient.Gzip("""
            {"BuildVersion":60000,"Docs":[
             {"Name":"good1","@metadata":{"@id":"people/1","@collection":"People"}},
             {"Name":"no id","@metadata":{"@collection":"People"}},
             42,
             {"A":1,"A":2,"@metadata":{"@id":"people/dup"}},
             {"N":1e400,"@metadata":{"@id":"people/huge-number"}},
             {"@metadata":{"@id":"bad\u0001id"}},
             {"@metadata":"not an object"},
             {"@metadata":{"@id":"people/slash/"}},
             {"@metadata":{"@id":"people/3","@collection":7}},
             {"Name":"good2","@metadata":{"@id":"people/2","@collection":"People"}}
            ]}
            """);
        var (response, body, state) = await SmugglerClient.ImportAsync(Client, db, dump);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal("Completed", state.GetProperty("Status").GetString());
        Assert.Equal("good1", (await SmugglerClient.GetAsync(Client, db, "people/1"))!.Value.GetProperty("Name").GetString());
        Assert.Equal("good2", (await SmugglerClient.GetAsync(Client, db, "people/2"))!.Value.GetProperty("Name").GetString());

        var refused = body.GetProperty("Refused").EnumerateArray().ToDictionary(r => r.GetProperty("Position").GetInt64());
        Assert.Equal([2L, 3, 4, 5, 6, 7, 8, 9], refused.Keys.Order());
        Assert.Equal(8, body.GetProperty("RefusedCount").GetInt64());
        Assert.Equal(8, body.GetProperty("Documents").GetProperty("ErroredCount").GetInt64());
        Assert.Contains("@metadata.@id", refused[2].GetProperty("Reason").GetString());
        Assert.Contains("not a JSON object", refused[3].GetProperty("Reason").GetString());
        Assert.Equal("people/dup", refused[4].GetProperty("Id").GetString());
        Assert.Contains("not a valid document", refused[4].GetProperty("Reason").GetString());
        Assert.Equal("people/huge-number", refused[5].GetProperty("Id").GetString());
        Assert.Equal("bad\u0001id", refused[6].GetProperty("Id").GetString());
        Assert.Contains("@metadata", refused[7].GetProperty("Reason").GetString());
        Assert.Contains("'/'", refused[8].GetProperty("Reason").GetString());
        Assert.Contains("@collection", refused[9].GetProperty("Reason").GetString());
        Assert.Contains(body.GetProperty("Messages").EnumerateArray(), m => m.GetString()!.Contains("ERROR] 'people/dup' (entry 4 of Docs) was not imported", StringComparison.Ordinal));
        // The operation's result is the same SmugglerResult.
        Assert.Equal(8, state.GetProperty("Result").GetProperty("RefusedCount").GetInt64());
    }

    [Fact]
    public async Task ADocumentOverTheLimitIsRefusedWithoutBeingHeldAndTheNextImported()
    {
        var db = await fixture.CreateDatabaseAsync();
        var big = new string('x', SmugglerClient.Fixture.MaxDocument * 3);
        var dump = SmugglerClient.Gzip($$$"""
            {"BuildVersion":60000,"Docs":[{"Big":"{{{big}}}","@metadata":{"@id":"big/1"}},{"Small":true,"@metadata":{"@id":"small/1"}}]}
            """);
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, db, dump);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var refusal = Assert.Single(body.GetProperty("Refused").EnumerateArray());
        Assert.Equal(1, refusal.GetProperty("Position").GetInt64());
        Assert.Contains("Limits:MaxDocumentBodySize", refusal.GetProperty("Reason").GetString());
        Assert.Null(await SmugglerClient.GetAsync(Client, db, "big/1"));
        Assert.NotNull(await SmugglerClient.GetAsync(Client, db, "small/1"));
    }

    public static TheoryData<string, byte[], string> NotDumps => new()
    {
        { "plain JSON", Encoding.UTF8.GetBytes("""{"Docs":[]}"""), "plain JSON" },
        { "Zstandard", [0x28, 0xB5, 0x2F, 0xFD, 1, 2, 3], "Zstandard" },
        { "garbage", [1, 2, 3, 4, 5], "01020304" },
        { "empty", [], "empty" },
    };

    [Theory]
    [MemberData(nameof(NotDumps))]
    public async Task ABodyThatIsNoGzippedDumpIsA400BeforeTheImportStarts(string kind, byte[] bytes, string said)
    {
        var db = await fixture.CreateDatabaseAsync();
        var (multipart, _, state) = await SmugglerClient.ImportAsync(Client, db, bytes);
        Assert.Contains(said, await Api.AssertErrorAsync(multipart, HttpStatusCode.BadRequest, "BadRequestException"));
        Assert.Equal(JsonValueKind.Undefined, state.ValueKind);
        // Jackdaw's shortcut: the dump as the body itself.
        var raw = new ByteArrayContent(bytes);
        raw.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
        using var direct = await Client.PostAsync($"/databases/{db}/smuggler/import", raw);
        Assert.True((await Api.AssertErrorAsync(direct, HttpStatusCode.BadRequest, "BadRequestException")).Contains(said, StringComparison.Ordinal), kind);
    }

    [Fact]
    public async Task ADumpThatBreaksMidwayFaultsItsOperationNamingTheByteAndKeepsWhatCameBefore()
    {
        var db = await fixture.CreateDatabaseAsync();
        var dump = SmugglerClient.Gzip("""{"BuildVersion":60000,"Docs":[{"@metadata":{"@id":"a/1"}},{"x": ]}""");
        var (response, body, state) = await SmugglerClient.ImportAsync(Client, db, dump);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("not valid JSON at byte", message);
        Assert.Equal("Faulted", state.GetProperty("Status").GetString());
        Assert.Equal(message, state.GetProperty("Result").GetProperty("Message").GetString());
        Assert.NotNull(await SmugglerClient.GetAsync(Client, db, "a/1"));
        _ = body;
    }

    [Fact]
    public async Task AGzipStreamCorruptedMidwayIsA400()
    {
        var db = await fixture.CreateDatabaseAsync();
        var docs = string.Join(",", Enumerable.Range(1, 2000).Select(i => $$$"""{"N":{{{i}}},"Text":"{{{Guid.NewGuid()}}}","@metadata":{"@id":"n/{{{i}}}"}}"""));
        var dump = SmugglerClient.Gzip($$"""{"BuildVersion":60000,"Docs":[{{docs}}]}""");
        for (var i = dump.Length / 2; i < dump.Length / 2 + 64; i++)
        {
            dump[i] ^= 0x5A;
        }
        var (response, _, state) = await SmugglerClient.ImportAsync(Client, db, dump);
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("Faulted", state.GetProperty("Status").GetString());
        Assert.DoesNotContain("   at ", state.GetProperty("Result").GetProperty("Message").GetString());
    }

    /// <summary>A dump as RavenDB 5/6 writes it, by hand from its format: what Jackdaw has is imported, the rest read past.</summary>
    [Fact]
    public async Task ADumpAsRavenDbWritesItImports()
    {
        var db = await fixture.CreateDatabaseAsync();
        var json = new MemoryStream();
        void Write(string text) => json.Write(Encoding.UTF8.GetBytes(text));
        Write("""
            {"BuildVersion":54123,
             "DatabaseRecord":{"DatabaseName":"Northwind","Encrypted":false,"UnusedDatabaseIds":[],"Revisions":null,"Expiration":null,"Analyzers":{}},
             "Docs":[
              {"Name":"Alfreds","Address":{"City":"Berlin"},"@metadata":{"@collection":"Companies","@change-vector":"A:12-Z0k3vH7KyEKIFdPcTV4oQg","@flags":"HasCounters, HasAttachments","@id":"companies/1-A","@last-modified":"2018-07-27T12:11:53.0447651Z","@counters":["likes"],"@attachments":[{"Name":"logo.png","Hash":"aGFzaA==","ContentType":"image/png","Size":5}],"Raven-Clr-Type":"Orders.Company, Northwind"}},
              {"@metadata":{"@export-type":"Attachment"},"Hash":"aGFzaA==","Size":5,"Tag":"Attachment"}
            """);
        json.Write([0x00, (byte)'}', (byte)']', 0xFF, (byte)'"']);
        Write("""
              ,{"Max":64,"@metadata":{"@collection":"@hilo","@id":"Raven/Hilo/companies","@change-vector":"A:1-Z0k3vH7KyEKIFdPcTV4oQg"}},
              {"Loose":true,"@metadata":{"@collection":"@empty","@id":"loose/1"}}
             ],
             "RevisionDocuments":[{"Name":"old","@metadata":{"@id":"companies/1-A","@collection":"Companies","@change-vector":"A:11-Z0k3vH7KyEKIFdPcTV4oQg","@last-modified":"2018-07-27T12:10:00.0000000Z","@flags":"HasRevisions, Revision"}}],
             "Tombstones":[{"Key":"companies/9-a","Type":"Document","Collection":"Companies","Flags":"None","ChangeVector":"A:20-x","DeletedEtag":20,"Etag":21,"LastModified":"2018-07-27T12:11:53.0447651Z"},
                           {"Key":"companies/1-a/logo.png","Type":"Attachment","Collection":null,"Flags":"None","ChangeVector":"A:22-x","DeletedEtag":22,"Etag":22,"LastModified":"2018-07-27T12:11:53.0447651Z"}],
             "Conflicts":[],
             "Indexes":[
              {"Type":"Map","IndexDefinition":{"Name":"Orders/Totals","Maps":["from order in docs.Orders select new { order.Employee }"],"Reduce":null,"Fields":{},"LockMode":"Unlock","Priority":"Normal","Type":"Map","SourceType":"Documents"}},
              {"Type":"JavaScriptMap","IndexDefinition":{"Name":"Companies/ByCity","Maps":["map('Companies', c => ({ City: c.Address.City }))"],"Fields":{},"LockMode":"LockedIgnore","Priority":"High","Type":"JavaScriptMap"}},
              {"Type":"AutoMap","IndexDefinition":{"Name":"Auto/Companies/ByName","Collections":["Companies"],"MapFields":{"Name":{"Name":"Name","Indexing":"Default","Aggregation":"None"}},"LockMode":"Unlock","Priority":"Normal"}}
             ],
             "Identities":[{"Key":"companies|","Value":9}],
             "CompareExchange":[{"Key":"rvn-atomic/companies/1-a","Value":{"Object":{"Id":"companies/1-A"}}}],
             "CounterGroups":[{"DocId":"companies/1-A","ChangeVector":"A:13-x","Values":{"likes":5}}],
             "Subscriptions":[{"Query":"from Companies","ChangeVectorForNextBatchStartingPoint":"A:12-Z0k3vH7KyEKIFdPcTV4oQg","SubscriptionId":17,"SubscriptionName":"Companies feed","MentorNode":null,"PinToMentorNode":false,"NodeTag":"A","LastBatchAckTime":null,"LastClientConnectionTime":null,"Disabled":true,"ArchivedDataProcessingBehavior":null}],
             "TimeSeries":[{"Document":{"DocId":"companies/1-A","Name":"Heartrate","ChangeVector":"A:30-x","Collection":"Companies","Baseline":"2018-07-27T00:00:00.0000000Z"},"Size":3}
            """);
        json.Write([0x7B, 0x5B, 0x22]);
        Write("""
             ],
             "ReplicationHubCertificates":[]}
            """);
        var options = """{"OperateOnTypes":"DatabaseRecord,Documents,RevisionDocuments,Tombstones,Conflicts,Indexes,Identities,CompareExchange,CounterGroups,Attachments,Subscriptions,TimeSeries,ReplicationHubCertificates"}""";
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, db, SmugglerClient.Gzip(json.ToArray()), options);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());

        var company = (await SmugglerClient.GetAsync(Client, db, "companies/1-A"))!.Value;
        Assert.Equal("Berlin", company.GetProperty("Address").GetProperty("City").GetString());
        var metadata = company.GetProperty("@metadata");
        Assert.Equal("Companies", metadata.GetProperty("@collection").GetString());
        Assert.Equal("Orders.Company, Northwind", metadata.GetProperty("Raven-Clr-Type").GetString());
        foreach (var gone in new[] { "@counters", "@attachments" })
        {
            Assert.False(metadata.TryGetProperty(gone, out _), gone);
        }
        // HasCounters is not Jackdaw's; HasAttachments is the truth (its attachment was left out);
        // the document has the dump's revision.
        Assert.Equal("HasRevisions", metadata.GetProperty("@flags").GetString());
        Assert.NotEqual("A:12-Z0k3vH7KyEKIFdPcTV4oQg", metadata.GetProperty("@change-vector").GetString());
        var loose = (await SmugglerClient.GetAsync(Client, db, "loose/1"))!.Value;
        Assert.False(loose.GetProperty("@metadata").TryGetProperty("@collection", out _));

        var documents = body.GetProperty("Documents");
        Assert.Equal(3, documents.GetProperty("ReadCount").GetInt64());
        Assert.Equal(1, documents.GetProperty("Attachments").GetProperty("ReadCount").GetInt64());
        Assert.True(body.GetProperty("CompareExchange").GetProperty("Skipped").GetBoolean());
        // The revision is stored as it was; the attachment's content is not what its header says (a
        // hand-made hash), so the attachment is left out, and both are counted as errors.
        Assert.Equal(1, body.GetProperty("RevisionDocuments").GetProperty("ReadCount").GetInt64());
        Assert.False(body.GetProperty("RevisionDocuments").GetProperty("Skipped").GetBoolean());
        Assert.Equal(2, documents.GetProperty("Attachments").GetProperty("ErroredCount").GetInt64());
        using (var revisions = await Client.GetAsync($"/databases/{db}/revisions?id=companies/1-A"))
        {
            var revision = Assert.Single((await Api.JsonAsync(revisions)).GetProperty("Results").EnumerateArray());
            Assert.Equal("old", revision.GetProperty("Name").GetString());
            Assert.Equal("A:11-Z0k3vH7KyEKIFdPcTV4oQg", revision.GetProperty("@metadata").GetProperty("@change-vector").GetString());
        }
        // The document tombstone is applied (a tombstone alone: no such document here); the attachment's is read past.
        Assert.Equal(2, body.GetProperty("Tombstones").GetProperty("ReadCount").GetInt64());
        Assert.Equal(0, body.GetProperty("Tombstones").GetProperty("ErroredCount").GetInt64());

        // The C# map cannot run here: refused, named; the JavaScript one is made with its settings; the auto-index left to queries.
        var refusal = Assert.Single(body.GetProperty("Refused").EnumerateArray());
        Assert.Equal("Indexes", refusal.GetProperty("Section").GetString());
        Assert.Equal("Orders/Totals", refusal.GetProperty("Id").GetString());
        using (var indexes = await Client.GetAsync($"/databases/{db}/indexes"))
        {
            var index = Assert.Single((await Api.JsonAsync(indexes)).GetProperty("Results").EnumerateArray());
            Assert.Equal("Companies/ByCity", index.GetProperty("Name").GetString());
            Assert.Equal("LockedIgnore", index.GetProperty("LockMode").GetString());
            Assert.Equal("High", index.GetProperty("Priority").GetString());
        }
        using (var subscriptions = await Client.GetAsync($"/databases/{db}/subscriptions"))
        {
            var subscription = Assert.Single((await Api.JsonAsync(subscriptions)).GetProperty("Results").EnumerateArray());
            Assert.Equal("Companies feed", subscription.GetProperty("SubscriptionName").GetString());
            Assert.True(subscription.GetProperty("Disabled").GetBoolean());
            Assert.Equal(0, subscription.GetProperty("AckedEtag").GetInt64());
        }
        using (var next = await Client.PostAsync($"/databases/{db}/identity/next?name=companies", null))
        {
            Assert.Equal(10, (await Api.JsonAsync(next)).GetProperty("NewIdentityValue").GetInt64());
        }
        // RavenDB's HiLo document came along: the next range starts above its Max.
        using (var hilo = await Client.GetAsync($"/databases/{db}/hilo/next?tag=companies&lastBatchSize=0&lastRangeAt=&identityPartsSeparator=/&lastMax=0"))
        {
            Assert.True((await Api.JsonAsync(hilo)).GetProperty("Low").GetInt64() > 64);
        }
    }
}
