using System.Net;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Compat;

/// <summary>PATCH commands of bulk_docs: the scripts RavenDB's clients generate for patch and increment, and any other script.</summary>
public sealed class RavenPatchTests(ServerFixture fixture) : IClassFixture<ServerFixture>
{
    private HttpClient Client => fixture.Client;

    private async Task<System.Text.Json.JsonElement> BatchAsync(string db, string commands, HttpStatusCode expected = HttpStatusCode.OK)
    {
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[" + commands + "]}"));
        var body = await Api.JsonAsync(response);
        Assert.True(response.StatusCode == expected, body.ToString());
        return body;
    }

    [Fact]
    public async Task PatchAndIncrementChangeTheDocumentAndAnswerInRavenDbsShape()
    {
        var db = await fixture.CreateDatabaseAsync();
        await BatchAsync(db, """{"Type":"PUT","Id":"users/1","Document":{"Name":"Ada","Visits":1,"Tag":"a","Address":{"City":"Paris"},"@metadata":{"@collection":"Users"}}}""");

        var body = await BatchAsync(db, """
            {"Id":"users/1","ChangeVector":null,"Type":"PATCH","ReturnDocument":true,
             "Patch":{"Script":"this.Visits = this.Visits ? this.Visits + args.val_0 : args.val_0;\nthis.Tag = this.Tag ? this.Tag + args.val_1 : args.val_1;\nthis.Address.City = args.val_2;\nthis.Name = args.val_3;",
                      "Values":{"val_0":5,"val_1":"b","val_2":"London","val_3":"Ada L."}}}
            """);
        var result = body.GetProperty("Results")[0];
        Assert.Equal("PATCH", result.GetProperty("Type").GetString());
        Assert.Equal("Patched", result.GetProperty("PatchStatus").GetString());
        Assert.Equal("users/1", result.GetProperty("Id").GetString());
        Assert.StartsWith("A:", result.GetProperty("ChangeVector").GetString(), StringComparison.Ordinal);
        var modified = result.GetProperty("ModifiedDocument");
        Assert.Equal(6, modified.GetProperty("Visits").GetInt32());
        Assert.Equal("ab", modified.GetProperty("Tag").GetString());
        Assert.Equal("London", modified.GetProperty("Address").GetProperty("City").GetString());
        Assert.Equal("Ada L.", modified.GetProperty("Name").GetString());
        Assert.Equal("Users", modified.GetProperty("@metadata").GetProperty("@collection").GetString());
        Assert.Equal(result.GetProperty("ChangeVector").GetString(), modified.GetProperty("@metadata").GetProperty("@change-vector").GetString());

        // The same values again change nothing.
        var again = await BatchAsync(db, """{"Id":"users/1","Type":"PATCH","Patch":{"Script":"this.Name = args.n;","Values":{"n":"Ada L."}}}""");
        Assert.Equal("NotModified", again.GetProperty("Results")[0].GetProperty("PatchStatus").GetString());

        var missing = await BatchAsync(db, """{"Id":"users/none","Type":"PATCH","Patch":{"Script":"this.Name = args.n;","Values":{"n":"x"}}}""");
        Assert.Equal("DocumentDoesNotExist", missing.GetProperty("Results")[0].GetProperty("PatchStatus").GetString());
    }

    [Fact]
    public async Task APatchWithAStaleChangeVectorIsAConflict()
    {
        var db = await fixture.CreateDatabaseAsync();
        await BatchAsync(db, """{"Type":"PUT","Id":"a","Document":{"V":1}}""");
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""{"Commands":[{"Id":"a","Type":"PATCH","ChangeVector":"A:999-nope","Patch":{"Script":"this.V = args.v;","Values":{"v":2}}}]}"""));
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "ConcurrencyException");
    }

    [Theory]
    [InlineData("""{"Script":"this.V = ;","Values":{}}""", "JavaScriptException", "line 1")]
    [InlineData("""{"Script":"this.V = 2;\nthis.Missing.Deep = 1;"}""", "JavaScriptException", "line 2")]
    [InlineData("""{"Values":{}}""", "BadRequestException", "'Script'")]
    [InlineData("""{"Script":"this.V = 1;","Values":[1]}""", "BadRequestException", "'Values'")]
    public async Task AScriptThatFailsIs400NamingTheLineAndStoresNothing(string patch, string type, string mentions)
    {
        var db = await fixture.CreateDatabaseAsync();
        await BatchAsync(db, """{"Type":"PUT","Id":"a","Document":{"V":1}}""");
        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("{\"Commands\":[{\"Id\":\"a\",\"Type\":\"PATCH\",\"Patch\":" + patch + "}]}"));
        var message = await Api.AssertErrorAsync(response, HttpStatusCode.BadRequest, type);
        Assert.Contains(mentions, message, StringComparison.Ordinal);
        using var stored = await Client.GetAsync($"/databases/{db}/docs?id=a");
        Assert.Equal(1, (await Api.JsonAsync(stored)).GetProperty("Results")[0].GetProperty("V").GetInt32());
    }

    [Fact]
    public async Task AnIncrementPastTheLargestLongBecomesADoubleAndAStaleVersionOfAMissingDocumentIsAConflict()
    {
        var db = await fixture.CreateDatabaseAsync();
        await BatchAsync(db, """{"Type":"PUT","Id":"a","Document":{"Big":9223372036854775807}}""");
        var body = await BatchAsync(db, """{"Id":"a","Type":"PATCH","ReturnDocument":true,"Patch":{"Script":"this.Big = this.Big ? this.Big + args.d : args.d;","Values":{"d":1}}}""");
        Assert.Equal(9223372036854775808d, body.GetProperty("Results")[0].GetProperty("ModifiedDocument").GetProperty("Big").GetDouble());

        using var response = await Client.PostAsync($"/databases/{db}/bulk_docs", Api.Json("""{"Commands":[{"Id":"gone","Type":"PATCH","ChangeVector":"A:1-x","Patch":{"Script":"this.V = args.v;","Values":{"v":1}}}]}"""));
        await Api.AssertErrorAsync(response, HttpStatusCode.Conflict, "ConcurrencyException");
    }

    [Fact]
    public async Task IncrementingSomethingThatIsNotANumberFollowsJavaScript()
    {
        var db = await fixture.CreateDatabaseAsync();
        await BatchAsync(db, """{"Type":"PUT","Id":"a","Document":{"V":{"x":1},"S":"n"}}""");
        var body = await BatchAsync(db, """{"Id":"a","Type":"PATCH","ReturnDocument":true,"Patch":{"Script":"this.V = this.V ? this.V + args.d : args.d;\nthis.S = this.S ? this.S + args.d : args.d;","Values":{"d":1}}}""");
        var modified = body.GetProperty("Results")[0].GetProperty("ModifiedDocument");
        Assert.Equal("[object Object]1", modified.GetProperty("V").GetString());
        Assert.Equal("n1", modified.GetProperty("S").GetString());
    }
}
