using System.Net;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Documents;

/// <summary>
/// A load of one document is written whole before it is sent, so it goes with a Content-Length
/// rather than chunked; a <c>multi_get</c> item's headers stay as they were (no Content-Length).
/// </summary>
public sealed class DocumentAnswerLengthTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    [Theory]
    [InlineData("users/1", HttpStatusCode.OK)]
    [InlineData("users/missing", HttpStatusCode.NotFound)]
    public async Task ALoadByIdCarriesItsLength(string id, HttpStatusCode status)
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada","Text":"a longer text, so that the answer is more than a few bytes","@metadata":{"@collection":"Users"}}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        using var response = await Client.GetAsync($"/databases/{db}/docs?id={id}");
        var body = await response.Content.ReadAsByteArrayAsync();

        Assert.Equal(status, response.StatusCode);
        Assert.NotEqual(true, response.Headers.TransferEncodingChunked);
        Assert.Equal(body.Length, response.Content.Headers.ContentLength);
        Assert.True(body.Length > 50);
    }

    [Fact]
    public async Task AMultiGetItemHasNoContentLengthHeader()
    {
        var db = await fixture.CreateDatabaseAsync();
        using (var put = await Client.PutAsync($"/databases/{db}/docs?id=users/1", Api.Json("""{"Name":"Ada"}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        using var response = await Client.PostAsync($"/databases/{db}/multi_get", Api.Json("""{"Requests":[{"Url":"/docs","Query":"?id=users/1"}]}"""));
        var result = (await Api.JsonAsync(response)).GetProperty("Results")[0];

        Assert.Equal(200, result.GetProperty("StatusCode").GetInt32());
        Assert.Equal(["ETag", "Content-Type"], result.GetProperty("Headers").EnumerateObject().Select(p => p.Name));
        Assert.Equal("Ada", result.GetProperty("Result").GetProperty("Results")[0].GetProperty("Name").GetString());
    }
}
