using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

// Bad input: unknown databases, hostile bodies, bad and non-UTF-8 ids and names.
public partial class DocumentsApiTests
{
    [Fact]
    public async Task UnknownDatabaseIs503WithDatabaseMissing()
    {
        // As RavenDB answers it: its clients read a 404 as "no such document".
        using var response = await Client.GetAsync(Docs("NoSuchDb", "a"));
        await Api.AssertErrorAsync(response, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
        Assert.Equal("NoSuchDb", response.Headers.GetValues("Database-Missing").Single());
        using var put = await Client.PutAsync(Docs("NoSuchDb", "a"), Api.Json("{}"));
        await Api.AssertErrorAsync(put, HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException");
    }

    public static TheoryData<string, byte[]> HostileBodies() => new()
    {
        { "deep nesting", Encoding.UTF8.GetBytes(new string('[', 0) + "{\"a\":" + string.Concat(Enumerable.Repeat("[", 400)) + string.Concat(Enumerable.Repeat("]", 400)) + "}") },
        { "invalid UTF-8", [(byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', 0xC3, 0x28, (byte)'"', (byte)'}'] },
        { "truncated", Encoding.UTF8.GetBytes("{\"a\":[1,2,{\"b\":\"c") },
        { "not an object", Encoding.UTF8.GetBytes("[1,2,3]") },
        { "a string", Encoding.UTF8.GetBytes("\"hello\"") },
        { "trailing garbage", Encoding.UTF8.GetBytes("{\"a\":1} xyz") },
        { "empty", [] },
        { "lone brace", Encoding.UTF8.GetBytes("}") },
        { "duplicate names", Encoding.UTF8.GetBytes("{\"a\":1,\"a\":2}") },
        { "bad metadata", Encoding.UTF8.GetBytes("{\"@metadata\":[1]}") },
        { "bad collection", Encoding.UTF8.GetBytes("{\"@metadata\":{\"@collection\":5}}") },
    };

    [Theory]
    [MemberData(nameof(HostileBodies))]
    public async Task HostileBodiesAre400AndTheServerKeepsServing(string what, byte[] body)
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var response = await Client.PutAsync(Docs(db, "hostile"), new ByteArrayContent(body)))
        {
            Assert.True(response.StatusCode == HttpStatusCode.BadRequest, $"{what}: {response.StatusCode} {await response.Content.ReadAsStringAsync()}");
            var json = await Api.JsonAsync(response);
            Assert.False(string.IsNullOrEmpty(json.GetProperty("Type").GetString()));
            Assert.False(string.IsNullOrEmpty(json.GetProperty("Message").GetString()));
        }
        await PutAsync(db, "fine", "{}");
    }

    [Theory]
    [InlineData("")]
    [InlineData("%00bad")]
    [InlineData("%C3%28")]
    public async Task BadIdsAre400(string rawId)
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PutAsync($"/databases/{db}/docs?id={rawId}", Api.Json("{}"));
        await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        using var missing = await Client.PutAsync($"/databases/{db}/docs", Api.Json("{}"));
        await Api.AssertErrorAsync(missing, HttpStatusCode.BadRequest, "BadRequestException");
        using var tooLong = await Client.PutAsync(Docs(db, new string('x', 600)), Api.Json("{}"));
        await Api.AssertErrorAsync(tooLong, HttpStatusCode.BadRequest, "BadRequestException");
    }

    [Theory]
    [InlineData("%C3%28", "0xC3 at byte 0")]
    [InlineData("users%2F%FF", "0xFF at byte 6")]
    [InlineData("%ED%A0%80", "0xED at byte 0")]
    public async Task IdsThatAreNotUtf8Are400AndNothingIsStored(string rawId, string naming)
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id={rawId}", Api.Json("{}")))
        {
            var message = await Api.AssertErrorAsync(put, HttpStatusCode.BadRequest, "BadRequestException");
            Assert.Contains(naming, message, StringComparison.Ordinal);
            Assert.Contains("'id'", message, StringComparison.Ordinal);
        }
        using (var get = await Client.GetAsync($"/databases/{db}/docs?id={rawId}"))
        {
            await Api.AssertErrorAsync(get, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var delete = await Client.DeleteAsync($"/databases/{db}/docs?id={rawId}"))
        {
            await Api.AssertErrorAsync(delete, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using (var prefix = await Client.GetAsync($"/databases/{db}/docs?startsWith={rawId}"))
        {
            await Api.AssertErrorAsync(prefix, HttpStatusCode.BadRequest, "BadRequestException");
        }
        using var stats = await Client.GetAsync($"/databases/{db}/stats");
        Assert.Equal(0, (await Api.JsonAsync(stats)).GetProperty("CountOfDocuments").GetInt64());
    }

    [Fact]
    public async Task BatchIdWithALoneSurrogateIs400()
    {
        var db = await fixture.CreateDatabaseAsync();
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""{"Commands":[{"Type":"PUT","Id":"a\ud800b","Document":{}}]}"""));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == HttpStatusCode.BadRequest, body.ToString());
        Assert.EndsWith("Exception", body.GetProperty("Type").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task DatabaseNameThatIsNotUtf8Is400()
    {
        using var response = await Client.PutAsync("/admin/databases?name=%C3%28", null);
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, "BadRequestException");
        Assert.Contains("'name'", message, StringComparison.Ordinal);
        Assert.Contains("0xC3", message, StringComparison.Ordinal);
    }
}
