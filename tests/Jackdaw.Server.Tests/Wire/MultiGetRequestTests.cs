using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Tests.Wire;

public class MultiGetRequestTests
{
    // What RavenDB's Node.js client sends for a lazy load and a lazy query (its query is a string).
    private const string NodeClientBody = """
        {"Requests":[
          {"Url":"/databases/db/docs","Query":"?&id=users%2F1","Method":"GET","Headers":{}},
          {"Url":"/databases/db/queries","Query":"?queryHash=abc","Method":"POST","Headers":{"If-None-Match":"A:1-x","Empty":"","Missing":null},"Content":"{\"Query\":\"from 'Users' where Name = $p0\",\"QueryParameters\":{\"p0\":\"Ad\\\"a\"}}"}
        ],"Other":true}
        """;

    private static List<MultiGetRequest> Parse(string body) => MultiGetRequest.ParseAll(Encoding.UTF8.GetBytes(body));

    [Fact]
    public void ReadsRavenDbsRequestsAsTheNodeClientSendsThem()
    {
        var requests = Parse(NodeClientBody);
        Assert.Equal(2, requests.Count);
        Assert.Equal(("/databases/db/docs", "?&id=users%2F1", "GET"), (requests[0].Url, requests[0].Query, requests[0].Method));
        Assert.Empty(requests[0].Headers!);
        Assert.True(requests[0].Content.IsEmpty);

        Assert.Equal("POST", requests[1].Method);
        // Null and blank header values are left out, as RavenDB does.
        Assert.Equal([new("If-None-Match", "A:1-x")], requests[1].Headers!);
        using var query = JsonDocument.Parse(requests[1].Content);
        Assert.Equal("Ad\"a", query.RootElement.GetProperty("QueryParameters").GetProperty("p0").GetString());
    }

    [Fact]
    public void ContentGivenAsJsonIsPassedOnAsWrittenAndDefaultsFillTheRest()
    {
        var requests = Parse("""{"Requests":[{"Url":"/docs","Query":"id=a","Content":{"Ids":["a", "b"]}},{"Url":"/docs","Method":"post","Content":"plain"}]}""");
        Assert.Equal(("?id=a", "GET"), (requests[0].Query, requests[0].Method));
        Assert.Equal("""{"Ids":["a", "b"]}""", Encoding.UTF8.GetString(requests[0].Content.Span));
        Assert.Null(requests[0].Headers);
        Assert.Equal(("", "POST", "plain"), (requests[1].Query, requests[1].Method, Encoding.UTF8.GetString(requests[1].Content.Span)));
    }

    public static TheoryData<int> Prefixes()
    {
        var data = new TheoryData<int>();
        for (var i = 0; i < Encoding.UTF8.GetByteCount(NodeClientBody); i++)
        {
            data.Add(i);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Prefixes))]
    public void EveryTruncatedBodyIsAClientError(int length)
    {
        var body = Encoding.UTF8.GetBytes(NodeClientBody)[..length];
        // Malformed JSON is mapped to a 400 InvalidJsonException, a wrong shape to a 400 BadRequestException.
        var error = Record.Exception(() => MultiGetRequest.ParseAll(body));
        Assert.True(error is JsonException or BadRequestException, $"{length} bytes: {error?.GetType().Name ?? "no error"}");
    }
}
