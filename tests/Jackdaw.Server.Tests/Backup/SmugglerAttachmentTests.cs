using System.IO.Compression;
using System.Net;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>
/// Attachments and revisions in a <c>.ravendbdump</c>, as RavenDB writes them: each distinct
/// content once, its header and raw bytes right before the first document that lists it, then the
/// documents, then <c>RevisionDocuments</c>; imported through the attachments API, contents
/// deduplicated by hash.
/// </summary>
public sealed class SmugglerAttachmentTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static readonly byte[] Hello = "hello"u8.ToArray();

    private async Task PutAsync(string db, string id, string json)
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<long> RevisionCountAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/revisions/count?id={Uri.EscapeDataString(id)}");
        return (await Api.JsonAsync(response)).GetProperty("RevisionsCount").GetInt64();
    }

    /// <summary>users/1 (hello + 3 MB, three versions), users/2 (the same hello), users/3 (an empty file); revisions on for Users.</summary>
    private async Task<(string Db, byte[] Big)> SeedAsync()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var config = await Client.PostAsync($"/databases/{db}/admin/revisions/config", Api.Json("""{"Default":null,"Collections":{"Users":{"Disabled":false,"MinimumRevisionsToKeep":10}}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, config.StatusCode);
        }
        for (var i = 1; i <= 3; i++)
        {
            await PutAsync(db, $"users/{i}", $$$"""{"Name":"user {{{i}}}","@metadata":{"@collection":"Users"}}""");
        }
        var big = new byte[3 * 1024 * 1024 + 17];
        new Random(31).NextBytes(big);
        await DirectAttachments.PutAsync(fixture.Server, db, "users/1", "a.txt", Hello);
        await DirectAttachments.PutAsync(fixture.Server, db, "users/1", "big.bin", big, "application/octet-stream");
        await DirectAttachments.PutAsync(fixture.Server, db, "users/2", "b.txt", Hello);
        await DirectAttachments.PutAsync(fixture.Server, db, "users/3", "empty", []);
        await PutAsync(db, "users/1", """{"Name":"user 1, renamed","@metadata":{"@collection":"Users"}}""");
        return (db, big);
    }

    /// <summary>The elements of the dump's <c>Docs</c>, in order: an attachment header's hash, or a document's id.</summary>
    private static List<string> DocsOrder(byte[] dump)
    {
        using var input = new GZipStream(new MemoryStream(dump), CompressionMode.Decompress);
        using var text = new MemoryStream();
        input.CopyTo(text);
        var bytes = text.ToArray();
        var order = new List<string>();
        var start = bytes.AsSpan().IndexOf("\"Docs\":["u8) + 8;
        var reader = new Utf8JsonReader(bytes.AsSpan(start), new JsonReaderOptions { AllowMultipleValues = true });
        var offset = start;
        while (true)
        {
            // Skip the separators between elements, as a reader of RavenDB's dumps does.
            while (bytes[offset] is (byte)',' or (byte)' ' or (byte)'\n')
            {
                offset++;
            }
            if (bytes[offset] == (byte)']')
            {
                return order;
            }
            reader = new Utf8JsonReader(bytes.AsSpan(offset), new JsonReaderOptions { AllowMultipleValues = true });
            using var element = JsonDocument.ParseValue(ref reader);
            offset += (int)reader.BytesConsumed;
            var metadata = element.RootElement.GetProperty("@metadata");
            if (metadata.TryGetProperty("@export-type", out _))
            {
                order.Add("content " + element.RootElement.GetProperty("Hash").GetString());
                offset += (int)element.RootElement.GetProperty("Size").GetInt64();
            }
            else
            {
                order.Add(metadata.GetProperty("@id").GetString()!);
            }
        }
    }

    private static string Hash(byte[] content) => Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(content));

    [Fact]
    public async Task AnExportWritesEachContentOnceBeforeItsFirstDocumentAndAnImportRestoresThemDeduplicated()
    {
        var (source, big) = await SeedAsync();
        var (dump, state) = await SmugglerClient.ExportAsync(Client, source);
        var result = state.GetProperty("Result");
        Assert.Equal(3, result.GetProperty("Documents").GetProperty("Attachments").GetProperty("ReadCount").GetInt64());

        // users/1 was stored last (its rename): users/2 lists hello first, users/3 the empty file.
        var order = DocsOrder(dump);
        Assert.Equal(["content " + Hash(Hello), "users/2", "content " + Hash([]), "users/3", "content " + Hash(big), "users/1"], order);
        // users/1: created, two attachments, renamed; the others: created, one attachment.
        Assert.Equal(8, result.GetProperty("RevisionDocuments").GetProperty("ReadCount").GetInt64());

        var target = await fixture.CreateDatabaseAsync();
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, dump);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.Equal(3, body.GetProperty("Documents").GetProperty("Attachments").GetProperty("ReadCount").GetInt64());

        var one = DirectAttachments.Read(fixture.Server, target, "users/1");
        Assert.Equal(["a.txt", "big.bin"], one.Select(a => a.Info.Name));
        Assert.Equal(Hello, one[0].Content);
        Assert.Equal(big, one[1].Content);
        Assert.Equal("application/octet-stream", one[1].Info.ContentType);
        Assert.Equal(Hello, Assert.Single(DirectAttachments.Read(fixture.Server, target, "users/2")).Content);
        Assert.Empty(Assert.Single(DirectAttachments.Read(fixture.Server, target, "users/3")).Content);
        // users/1 and users/2 list it, and so do four imported revisions (three of users/1, one of users/2): revisions hold references.
        Assert.Equal(6, DirectAttachments.References(fixture.Server, target, Hash(Hello)));
        var stats = DirectAttachments.Stats(fixture.Server, target);
        Assert.Equal(4, stats.Attachments);
        Assert.Equal(3, stats.Contents);

        var document = (await SmugglerClient.GetAsync(Client, target, "users/1"))!.Value;
        var metadata = document.GetProperty("@metadata");
        Assert.Equal("user 1, renamed", document.GetProperty("Name").GetString());
        Assert.Equal(["a.txt", "big.bin"], metadata.GetProperty("@attachments").EnumerateArray().Select(a => a.GetProperty("Name").GetString()));
        Assert.Equal("HasRevisions, HasAttachments", metadata.GetProperty("@flags").GetString());

        // Every revision came along (and the import's own puts added theirs: revisions are on in the
        // target too only if configured; here they are not, so the counts are the source's).
        foreach (var id in new[] { "users/1", "users/2", "users/3" })
        {
            Assert.Equal(await RevisionCountAsync(source, id), await RevisionCountAsync(target, id));
        }

        // Importing the same dump again changes no content's count and stores no revision twice.
        var (again, againBody, _) = await SmugglerClient.ImportAsync(Client, target, dump);
        Assert.True(again.StatusCode == HttpStatusCode.OK, againBody.ToString());
        Assert.Equal(6, DirectAttachments.References(fixture.Server, target, Hash(Hello)));
        Assert.Equal(await RevisionCountAsync(source, "users/1"), await RevisionCountAsync(target, "users/1"));
    }

    [Fact]
    public async Task WithoutAttachmentsInOperateOnTypesNoContentIsWrittenAndDocumentsLoseTheirList()
    {
        var (source, _) = await SeedAsync();
        var (dump, _) = await SmugglerClient.ExportAsync(Client, source, """{"OperateOnTypes":"Documents"}""");
        var order = DocsOrder(dump);
        Assert.DoesNotContain(order, e => e.StartsWith("content ", StringComparison.Ordinal));
        var parsed = SmugglerClient.Parse(dump);
        Assert.False(parsed.TryGetProperty("RevisionDocuments", out _));
        foreach (var document in parsed.GetProperty("Docs").EnumerateArray())
        {
            Assert.False(document.GetProperty("@metadata").TryGetProperty("@attachments", out _));
        }

        // A full dump imported without Attachments: the documents come, no content is stored.
        var (full, _) = await SmugglerClient.ExportAsync(Client, source);
        var target = await fixture.CreateDatabaseAsync();
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, full, """{"OperateOnTypes":"Documents"}""");
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        Assert.True(body.GetProperty("Documents").GetProperty("Attachments").GetProperty("Skipped").GetBoolean());
        Assert.Equal(0, DirectAttachments.Stats(fixture.Server, target).Contents);
        Assert.NotNull(await SmugglerClient.GetAsync(Client, target, "users/3"));
        Assert.Equal(0, await RevisionCountAsync(target, "users/1"));
    }

    [Fact]
    public async Task AnImportMakesADocumentsAttachmentsWhatTheDumpLists()
    {
        var (source, _) = await SeedAsync();
        var (dump, _) = await SmugglerClient.ExportAsync(Client, source);
        var target = await fixture.CreateDatabaseAsync();
        await PutAsync(target, "users/2", """{"Name":"here before","@metadata":{"@collection":"Users"}}""");
        await DirectAttachments.PutAsync(fixture.Server, target, "users/2", "stale.txt", Encoding.UTF8.GetBytes("not in the dump"));
        var (response, body, _) = await SmugglerClient.ImportAsync(Client, target, dump);
        Assert.True(response.StatusCode == HttpStatusCode.OK, body.ToString());
        var two = Assert.Single(DirectAttachments.Read(fixture.Server, target, "users/2"));
        Assert.Equal("b.txt", two.Info.Name);
        Assert.Equal(0, DirectAttachments.References(fixture.Server, target, Hash(Encoding.UTF8.GetBytes("not in the dump"))));
    }
}
