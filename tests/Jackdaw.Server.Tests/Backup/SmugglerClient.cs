using System.IO.Compression;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Backup;

/// <summary>The smuggler routes as RavenDB's clients call them, for the tests.</summary>
public static class SmugglerClient
{
    /// <summary>A server whose documents may be at most <see cref="MaxDocument"/> bytes, to refuse a large one cheaply.</summary>
    public sealed class Fixture : ServerFixture
    {
        public const int MaxDocument = 200_000;

        protected override string[] Args => ["--max-body-size", "67108864", $"--Limits:MaxDocumentBodySize={MaxDocument}"];
    }

    public static async Task<long> NextOperationIdAsync(HttpClient client, string db)
    {
        using var response = await client.GetAsync($"/databases/{db}/operations/next-operation-id");
        return (await Api.JsonAsync(response)).GetProperty("Id").GetInt64();
    }

    /// <summary>Exports with RavenDB's options JSON; returns the dump's (gzipped) bytes and the operation's final state.</summary>
    public static async Task<(byte[] Dump, JsonElement State)> ExportAsync(HttpClient client, string db, string optionsJson = "{}", string query = "")
    {
        var id = await NextOperationIdAsync(client, db);
        using var response = await client.PostAsync($"/databases/{db}/smuggler/export?operationId={id}{query}", Api.Json(optionsJson));
        var dump = await response.Content.ReadAsByteArrayAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{response.StatusCode}: {Encoding.UTF8.GetString(dump)}");
        Assert.Equal("application/octet-stream", response.Content.Headers.ContentType?.MediaType);
        return (dump, await StateAsync(client, db, id));
    }

    /// <summary>Imports as RavenDB's clients do: multipart, the options then the file; returns the answer and the operation's final state.</summary>
    public static async Task<(HttpResponseMessage Response, JsonElement Body, JsonElement State)> ImportAsync(HttpClient client, string db, byte[] dump, string optionsJson = "{}")
    {
        var id = await NextOperationIdAsync(client, db);
        using var form = new MultipartFormDataContent();
        form.Add(new StringContent(optionsJson), "importOptions");
        var file = new ByteArrayContent(dump);
        file.Headers.ContentType = new MediaTypeHeaderValue("text/plain");
        form.Add(file, "name", "blob");
        var response = await client.PostAsync($"/databases/{db}/smuggler/import?operationId={id}", form);
        var body = await Api.JsonAsync(response);
        using var state = await client.GetAsync($"/databases/{db}/operations/state?id={id}");
        // A request refused before the import started leaves no operation behind.
        return (response, body, state.StatusCode == HttpStatusCode.NotFound ? default : await Api.JsonAsync(state));
    }

    public static async Task<JsonElement> StateAsync(HttpClient client, string db, long id)
    {
        using var response = await client.GetAsync($"/databases/{db}/operations/state?id={id}");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return await Api.JsonAsync(response);
    }

    public static byte[] Gzip(string json) => Gzip(Encoding.UTF8.GetBytes(json));

    public static byte[] Gzip(byte[] bytes)
    {
        using var output = new MemoryStream();
        using (var gzip = new GZipStream(output, CompressionLevel.Fastest, leaveOpen: true))
        {
            gzip.Write(bytes);
        }
        return output.ToArray();
    }

    /// <summary>The dump's JSON, gunzipped and parsed.</summary>
    public static JsonElement Parse(byte[] dump)
    {
        using var input = new GZipStream(new MemoryStream(dump), CompressionMode.Decompress);
        using var text = new MemoryStream();
        input.CopyTo(text);
        return JsonDocument.Parse(text.ToArray()).RootElement.Clone();
    }

    public static async Task PutAsync(HttpClient client, string db, string id, string json)
    {
        using var response = await client.PutAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}", Api.Json(json));
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"PUT {id}: {response.StatusCode} {await response.Content.ReadAsStringAsync()}");
    }

    /// <summary>The document as stored, without what the server stamps (its change vector and time).</summary>
    public static async Task<JsonElement?> GetAsync(HttpClient client, string db, string id)
    {
        using var response = await client.GetAsync($"/databases/{db}/docs?id={Uri.EscapeDataString(id)}");
        if (response.StatusCode == HttpStatusCode.NotFound)
        {
            return null;
        }
        var body = await Api.JsonAsync(response);
        return body.GetProperty("Results")[0];
    }

    /// <summary>A document's JSON without <c>@change-vector</c> and <c>@last-modified</c>, for comparing two databases.</summary>
    public static string Comparable(JsonElement document)
    {
        var node = System.Text.Json.Nodes.JsonNode.Parse(document.GetRawText())!.AsObject();
        if (node["@metadata"] is System.Text.Json.Nodes.JsonObject metadata)
        {
            metadata.Remove("@change-vector");
            metadata.Remove("@last-modified");
        }
        return node.ToJsonString();
    }
}
