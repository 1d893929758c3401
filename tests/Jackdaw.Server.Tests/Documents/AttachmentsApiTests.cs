using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary><c>/databases/*/attachments</c> over HTTP, in the shapes RavenDB's clients send and read.</summary>
public sealed class AttachmentsApiTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private static string Url(string db, string id, string name, string? contentType = null) =>
        $"/databases/{db}/attachments?id={Uri.EscapeDataString(id)}&name={Uri.EscapeDataString(name)}" + (contentType is null ? "" : $"&contentType={Uri.EscapeDataString(contentType)}");

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private async Task PutDocumentAsync(string db, string id, string json = """{"Name":"x","@metadata":{"@collection":"Users"}}""")
    {
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    private async Task<JsonElement> PutAttachmentAsync(string db, string id, string name, byte[] content, string? contentType = "application/octet-stream")
    {
        using var body = new ByteArrayContent(content);
        using var response = await Client.PutAsync(Url(db, id, name, contentType), body);
        var json = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.Created, json.ToString());
        return json;
    }

    private async Task<JsonElement> GetDocumentAsync(string db, string id)
    {
        using var response = await Client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await Api.JsonAsync(response)).GetProperty("Results")[0];
    }

    private AttachmentStorageStats Stats(string db)
    {
        using var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(10 * 1024 * 1024)]
    public async Task AnAttachmentRoundTripsWithItsHashSizeAndContentType(int length)
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        var content = Bytes(length, length);
        var hash = Convert.ToBase64String(SHA256.HashData(content));

        var put = await PutAttachmentAsync(db, "users/1", "file.bin", content, "image/png");
        Assert.Equal("users/1", put.GetProperty("DocumentId").GetString());
        Assert.Equal("file.bin", put.GetProperty("Name").GetString());
        Assert.Equal("image/png", put.GetProperty("ContentType").GetString());
        Assert.Equal(hash, put.GetProperty("Hash").GetString());
        Assert.Equal(length, put.GetProperty("Size").GetInt64());
        var changeVector = put.GetProperty("ChangeVector").GetString()!;

        using var get = await Client.GetAsync(Url(db, "users/1", "FILE.BIN"), HttpCompletionOption.ResponseHeadersRead);
        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal("image/png", get.Content.Headers.ContentType!.MediaType);
        Assert.Equal(hash, get.Headers.GetValues("Attachment-Hash").Single());
        Assert.Equal(length.ToString(System.Globalization.CultureInfo.InvariantCulture), get.Headers.GetValues("Attachment-Size").Single());
        Assert.Equal($"\"{changeVector}\"", get.Headers.ETag!.ToString());
        Assert.Equal(length, get.Content.Headers.ContentLength);
        var received = await get.Content.ReadAsByteArrayAsync();
        Assert.Equal(hash, Convert.ToBase64String(SHA256.HashData(received)));

        var metadata = (await GetDocumentAsync(db, "users/1")).GetProperty("@metadata");
        Assert.Equal("HasAttachments", metadata.GetProperty("@flags").GetString());
        Assert.Equal(changeVector, metadata.GetProperty("@change-vector").GetString());
        var listed = Assert.Single(metadata.GetProperty("@attachments").EnumerateArray());
        Assert.Equal(["Name", "Hash", "ContentType", "Size"], listed.EnumerateObject().Select(p => p.Name));
        Assert.Equal(hash, listed.GetProperty("Hash").GetString());
    }

    [Fact]
    public async Task TheSameBytesOnAThousandDocumentsAreStoredOnce()
    {
        var db = await fixture.CreateDatabaseAsync();
        var commands = string.Join(",", Enumerable.Range(0, 1000).Select(i => "{\"Type\":\"PUT\",\"Id\":\"docs/" + i + "\",\"Document\":{\"@metadata\":{\"@collection\":\"Docs\"}}}"));
        using (var batch = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json($$"""{"Commands":[{{commands}}]}""")))
        {
            Assert.Equal(HttpStatusCode.OK, batch.StatusCode);
        }
        var content = Bytes(200_000, 5);
        var hash = Convert.ToBase64String(SHA256.HashData(content));
        await Parallel.ForEachAsync(Enumerable.Range(0, 1000), new ParallelOptions { MaxDegreeOfParallelism = 8 }, async (i, _) =>
        {
            var put = await PutAttachmentAsync(db, $"docs/{i}", "same.bin", content);
            Assert.Equal(hash, put.GetProperty("Hash").GetString());
        });

        var stats = Stats(db);
        Assert.Equal(1000, stats.Attachments);
        Assert.Equal(1, stats.Contents);
        Assert.Equal(4, stats.Chunks);
        using (var reader = fixture.Server.Host.Server.Databases.GetDatabase(db).BeginRead())
        {
            Assert.Equal(1000, reader.GetAttachmentContent(hash)!.Value.References);
        }

        // Deleting the documents releases the content; the clean-up deletes its chunks.
        commands = string.Join(",", Enumerable.Range(0, 1000).Select(i => $$"""{"Type":"DELETE","Id":"docs/{{i}}"}"""));
        using (var batch = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json($$"""{"Commands":[{{commands}}]}""")))
        {
            Assert.Equal(HttpStatusCode.OK, batch.StatusCode);
        }
        await Poll.UntilAsync(() => Task.FromResult(Stats(db) == new AttachmentStorageStats(0, 0, 0, 0)), TimeSpan.FromSeconds(30), "the content's chunks to be deleted");
    }

    [Fact]
    public async Task RangesAreServedAsPartialContent()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        var content = Bytes(200_000, 9);
        await PutAttachmentAsync(db, "users/1", "r", content);

        async Task<(HttpStatusCode Status, byte[] Body, string? ContentRange)> GetRangeAsync(string range)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, Url(db, "users/1", "r"));
            request.Headers.TryAddWithoutValidation("Range", range);
            using var response = await Client.SendAsync(request);
            return (response.StatusCode, await response.Content.ReadAsByteArrayAsync(), response.Content.Headers.ContentRange?.ToString());
        }

        var middle = await GetRangeAsync("bytes=65500-65600");
        Assert.Equal(HttpStatusCode.PartialContent, middle.Status);
        Assert.Equal(content[65500..65601], middle.Body);
        Assert.Equal("bytes 65500-65600/200000", middle.ContentRange);

        var open = await GetRangeAsync("bytes=199990-");
        Assert.Equal(content[199990..], open.Body);
        var suffix = await GetRangeAsync("bytes=-5");
        Assert.Equal(content[^5..], suffix.Body);
        var clipped = await GetRangeAsync("bytes=199999-300000");
        Assert.Equal(content[^1..], clipped.Body);

        var outside = await GetRangeAsync("bytes=200000-");
        Assert.Equal(HttpStatusCode.RequestedRangeNotSatisfiable, outside.Status);
        Assert.Equal("bytes */200000", outside.ContentRange);
        var several = await GetRangeAsync("bytes=0-1,5-6");
        Assert.Equal(HttpStatusCode.OK, several.Status);
        Assert.Equal(content, several.Body);
    }

    [Fact]
    public async Task HeadDeleteAndChangeVectorsBehaveAsRavenDbs()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        var changeVector = (await PutAttachmentAsync(db, "users/1", "a.txt", "hello"u8.ToArray(), "text/plain")).GetProperty("ChangeVector").GetString()!;

        using (var head = await Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, Url(db, "users/1", "a.txt"))))
        {
            Assert.Equal(HttpStatusCode.OK, head.StatusCode);
            Assert.Equal($"\"{changeVector}\"", head.Headers.ETag!.ToString());
        }
        var conditional = new HttpRequestMessage(HttpMethod.Head, Url(db, "users/1", "a.txt"));
        conditional.Headers.IfNoneMatch.Add(new EntityTagHeaderValue($"\"{changeVector}\""));
        using (var head = await Client.SendAsync(conditional))
        {
            Assert.Equal(HttpStatusCode.NotModified, head.StatusCode);
        }
        using (var head = await Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, Url(db, "users/1", "b.txt"))))
        {
            Assert.Equal(HttpStatusCode.NotFound, head.StatusCode);
        }

        // A put over it with a stale change vector is refused; the right one replaces it.
        var stale = new HttpRequestMessage(HttpMethod.Put, Url(db, "users/1", "a.txt")) { Content = new ByteArrayContent([1]) };
        stale.Headers.TryAddWithoutValidation("If-Match", "\"A:1-nope\"");
        using (var response = await Client.SendAsync(stale))
        {
            await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "ConcurrencyException");
        }

        var delete = new HttpRequestMessage(HttpMethod.Delete, Url(db, "users/1", "a.txt"));
        delete.Headers.TryAddWithoutValidation("If-Match", $"\"{changeVector}\"");
        using (var response = await Client.SendAsync(delete))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        using (var response = await Client.DeleteAsync(Url(db, "users/1", "a.txt")))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }
        using (var get = await Client.GetAsync(Url(db, "users/1", "a.txt")))
        {
            await Api.AssertErrorAsync(get, HttpStatusCode.NotFound, "AttachmentDoesNotExistException");
        }
        var metadata = (await GetDocumentAsync(db, "users/1")).GetProperty("@metadata");
        Assert.False(metadata.TryGetProperty("@attachments", out _));
        Assert.False(metadata.TryGetProperty("@flags", out _));
    }

    [Fact]
    public async Task BadInputsAreRefusedWithJsonErrorsAndStoreNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        using (var response = await Client.PutAsync(Url(db, "users/404", "a"), new ByteArrayContent([1])))
        {
            var message = await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "DocumentDoesNotExistException");
            Assert.Contains("users/404", message, StringComparison.Ordinal);
        }
        using (var response = await Client.PutAsync(Url(db, "users/1", ""), new ByteArrayContent([1])))
        {
            await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var response = await Client.PutAsync(Url(db, "users/1", "a\u0001b"), new ByteArrayContent([1])))
        {
            Assert.Contains("control character", await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException"), StringComparison.Ordinal);
        }
        using (var response = await Client.PutAsync($"/databases/{db}/attachments?id=users/1", new ByteArrayContent([1])))
        {
            await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var response = await Client.GetAsync(Url(db, "users/404", "a")))
        {
            await Api.AssertErrorAsync(response, HttpStatusCode.NotFound, "DocumentDoesNotExistException");
        }
        Assert.Equal(new AttachmentStorageStats(0, 0, 0, 0), Stats(db));
    }

    [Fact]
    public async Task ABodyCutOffMidStreamStoresNothing()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        var sent = Bytes(3 * 1024 * 1024, 13);
        using (var connection = await RawConnection.OpenAsync(Client.BaseAddress!))
        {
            await connection.SendAsync($"PUT {Url(db, "users/1", "cut.bin")} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {10 * 1024 * 1024}\r\n\r\n");
            await connection.Stream.WriteAsync(sent);
            await connection.Stream.FlushAsync();
            // Wait until the server has staged some of it, then drop the connection.
            await Poll.UntilAsync(() => Task.FromResult(Stats(db).StagedStreams > 0), TimeSpan.FromSeconds(30), "the upload to be staged");
        }
        await Poll.UntilAsync(() => Task.FromResult(Stats(db) == new AttachmentStorageStats(0, 0, 0, 0)), TimeSpan.FromSeconds(30), "the staged chunks to be deleted");
        var metadata = (await GetDocumentAsync(db, "users/1")).GetProperty("@metadata");
        Assert.False(metadata.TryGetProperty("@attachments", out _));
    }

    [Fact]
    public async Task SeveralAttachmentsAreReadInOneBulkRequest()
    {
        var db = await fixture.CreateDatabaseAsync();
        await PutDocumentAsync(db, "users/1");
        await PutDocumentAsync(db, "users/2");
        var first = Bytes(100_000, 1);
        var second = "second"u8.ToArray();
        await PutAttachmentAsync(db, "users/1", "a", first, "x/a");
        await PutAttachmentAsync(db, "users/2", "b", second, "x/b");

        using var response = await Client.PostAsync($"/databases/{db}/attachments/bulk", Api.Json("""
            {"AttachmentType":"Document","Attachments":[{"DocumentId":"users/2","Name":"b"},{"DocumentId":"users/1","Name":"missing"},{"DocumentId":"USERS/1","Name":"A"}]}
            """));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var body = await response.Content.ReadAsByteArrayAsync();
        var reader = new Utf8JsonReader(body);
        using var metadata = JsonDocument.ParseValue(ref reader);
        var list = metadata.RootElement.GetProperty("AttachmentsMetadata").EnumerateArray().ToList();
        Assert.Equal(["b", "a"], list.Select(a => a.GetProperty("Name").GetString()));
        Assert.Equal(["users/2", "users/1"], list.Select(a => a.GetProperty("DocumentId").GetString()));
        Assert.Equal([second.Length, first.Length], list.Select(a => a.GetProperty("Size").GetInt32()));
        Assert.Equal([.. second, .. first], body[(int)reader.BytesConsumed..]);
    }

    [Fact]
    public async Task AnAttachmentOverTheLimitIsRefusedWith413()
    {
        await using var server = await InProcessServer.StartAsync("--Attachments:MaxSize=2000000");
        using (var create = await server.Client.PutAsync("/admin/databases?name=small", null))
        {
            Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        }
        using (var put = await server.Client.PutAsync("/databases/small/docs?id=a", Api.Json("{}")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        using (var response = await server.Client.PutAsync(Url("small", "a", "big"), new ByteArrayContent(Bytes(2_000_001, 1))))
        {
            Assert.Contains("Attachments:MaxSize", await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException"), StringComparison.Ordinal);
        }

        // Without a Content-Length the limit is found as the body streams in; what was staged goes.
        var chunked = new StreamContent(new MemoryStream(Bytes(3_000_000, 2)));
        using (var request = new HttpRequestMessage(HttpMethod.Put, Url("small", "a", "big")) { Content = chunked })
        {
            request.Headers.TransferEncodingChunked = true;
            using var response = await server.Client.SendAsync(request);
            await Api.AssertErrorAsync(response, HttpStatusCode.RequestEntityTooLarge, "PayloadTooLargeException");
        }
        using (var response = await server.Client.PutAsync(Url("small", "a", "fits"), new ByteArrayContent(Bytes(2_000_000, 3))))
        {
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }
        var database = server.Host.Server.Databases.GetDatabase("small");
        await Poll.UntilAsync(() =>
        {
            using var reader = database.BeginRead();
            return Task.FromResult(reader.GetAttachmentStorageStats() == new AttachmentStorageStats(1, 1, 31, 0));
        }, TimeSpan.FromSeconds(30), "only the attachment that fits to be kept");
    }

    [Fact]
    public async Task AttachmentsSurviveARestartOfTheServer()
    {
        using var data = new TempFolder();
        var content = Bytes(1_500_000, 17);
        string changeVector;
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using (await server.Client.PutAsync("/admin/databases?name=Keep", null))
            {
            }
            using (await server.Client.PutAsync("/databases/Keep/docs?id=users/1", Api.Json("{}")))
            {
            }
            using var put = await server.Client.PutAsync(Url("Keep", "users/1", "photo.jpg", "image/jpeg"), new ByteArrayContent(content));
            changeVector = (await Api.JsonAsync(put)).GetProperty("ChangeVector").GetString()!;
        }
        await using (var server = await InProcessServer.StartAsync("--data-dir", data.Path))
        {
            using var get = await server.Client.GetAsync(Url("Keep", "users/1", "photo.jpg"));
            Assert.Equal(HttpStatusCode.OK, get.StatusCode);
            Assert.Equal(content, await get.Content.ReadAsByteArrayAsync());
            Assert.Equal($"\"{changeVector}\"", get.Headers.ETag!.ToString());
            Assert.Equal("image/jpeg", get.Content.Headers.ContentType!.MediaType);
        }
    }

    [Fact]
    public async Task ARevisionsAttachmentIsReadByTheRevisionsChangeVectorWithGetOrPost()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var configure = await Client.PostAsync($"/databases/{db}/admin/revisions/config", Api.Json("""{"Default":{"Disabled":false}}""")))
        {
            Assert.Equal(HttpStatusCode.OK, configure.StatusCode);
        }
        await PutDocumentAsync(db, "users/1");
        var old = Bytes(100_000, 21);
        var revision = (await PutAttachmentAsync(db, "users/1", "a.pdf", old, "application/pdf")).GetProperty("ChangeVector").GetString()!;
        await PutAttachmentAsync(db, "users/1", "a.pdf", Bytes(10, 22));
        using (var delete = await Client.DeleteAsync($"/databases/{db}/docs?id=users%2F1"))
        {
            Assert.Equal(HttpStatusCode.NoContent, delete.StatusCode);
        }

        // RavenDB's clients: a POST naming the revision; the GET form with the same in the query.
        var post = new HttpRequestMessage(HttpMethod.Post, Url(db, "users/1", "A.PDF")) { Content = Api.Json($$"""{"Type":"Revision","ChangeVector":"{{revision}}"}""") };
        foreach (var request in new[] { post, new HttpRequestMessage(HttpMethod.Get, Url(db, "USERS/1", "a.pdf") + $"&type=Revision&changeVector={Uri.EscapeDataString(revision)}") })
        {
            using var response = await Client.SendAsync(request);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal(old, await response.Content.ReadAsByteArrayAsync());
            Assert.Equal($"\"{revision}\"", response.Headers.ETag!.ToString());
            Assert.Equal(Convert.ToBase64String(SHA256.HashData(old)), response.Headers.GetValues("Attachment-Hash").Single());
            Assert.Equal("100000", response.Headers.GetValues("Attachment-Size").Single());
            Assert.Equal("application/pdf", response.Content.Headers.ContentType!.MediaType);
        }

        using (var range = new HttpRequestMessage(HttpMethod.Get, Url(db, "users/1", "a.pdf") + $"&type=Revision&changeVector={Uri.EscapeDataString(revision)}"))
        {
            range.Headers.Range = new RangeHeaderValue(10, 19);
            using var response = await Client.SendAsync(range);
            Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
            Assert.Equal(old[10..20], await response.Content.ReadAsByteArrayAsync());
        }

        using (var missing = await Client.GetAsync(Url(db, "users/1", "other.pdf") + $"&type=Revision&changeVector={Uri.EscapeDataString(revision)}"))
        {
            Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
            Assert.Equal("AttachmentDoesNotExistException", (await Api.JsonAsync(missing)).GetProperty("Type").GetString());
        }
        using (var noChangeVector = await Client.PostAsync(Url(db, "users/1", "a.pdf"), Api.Json("""{"Type":"Revision"}""")))
        {
            Assert.Equal(HttpStatusCode.BadRequest, noChangeVector.StatusCode);
        }
        using (var conflict = await Client.PostAsync(Url(db, "users/1", "a.pdf"), Api.Json("""{"Type":"Conflict","ChangeVector":"A:1-x"}""")))
        {
            Assert.Equal(HttpStatusCode.NotImplemented, conflict.StatusCode);
        }
    }
}
