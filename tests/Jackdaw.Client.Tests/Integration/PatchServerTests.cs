using System.Net;
using Jackdaw.Client.Tests.Infrastructure;

namespace Jackdaw.Client.Tests.Integration;

/// <summary><c>store.Operations</c>: a patch of one document, patch and delete by query, against the real server.</summary>
public sealed class PatchServerTests(ServerFixture server) : IClassFixture<ServerFixture>
{
    private static async Task StoreUsersAsync(DocumentStore store, int count)
    {
        using var session = store.OpenAsyncSession();
        for (var i = 0; i < count; i++)
        {
            await session.StoreAsync(new User { Name = "user" + i, Age = i }, "users/" + i);
        }
        await session.SaveChangesAsync();
    }

    private static async Task<User?> LoadAsync(DocumentStore store, string id)
    {
        using var session = store.OpenAsyncSession();
        return await session.LoadAsync<User>(id);
    }

    [Fact]
    public async Task PatchAsyncRunsAScriptWithValuesAndAnswersTheDocument()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 1);
        var result = await store.Operations.PatchAsync("users/0", new PatchRequest
        {
            Script = "this.Age += args.years; this.Tags.push(args.tag);",
            Values = { ["years"] = 5, ["tag"] = "patched" },
        });
        Assert.Equal(PatchStatus.Patched, result.Status);
        Assert.Equal(5, result.Document<User>()!.Age);
        var stored = await LoadAsync(store, "users/0");
        Assert.Equal(5, stored!.Age);
        Assert.Equal(["patched"], stored.Tags);
    }

    [Fact]
    public async Task PatchIfMissingCreatesAndAMissingDocumentIsReportedNotThrown()
    {
        using var store = await server.NewStoreAsync();
        var missing = await store.Operations.PatchAsync("users/none", new PatchRequest { Script = "this.Age++;" });
        Assert.Equal(PatchStatus.DocumentDoesNotExist, missing.Status);

        var created = await store.Operations.PatchAsync("users/new", new PatchRequest { Script = "this.Age++;" },
            new PatchRequest { Script = "this.Name = args.name; this.Age = 1; this['@metadata'] = { '@collection': 'Users' };", Values = { ["name"] = "New" } });
        Assert.Equal(PatchStatus.Created, created.Status);
        Assert.Equal("New", (await LoadAsync(store, "users/new"))!.Name);
    }

    [Fact]
    public async Task ATestPatchStoresNothingAndAFailingScriptThrowsTheServersError()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 1);
        var test = await store.Operations.PatchAsync("users/0", new PatchRequest { Script = "output('age', this.Age); this.Age = 99;" }, test: true);
        Assert.Equal(99, test.Document<User>()!.Age);
        Assert.Equal("age 0", test.Debug!.Value.GetProperty("Info")[0].GetString());
        Assert.Equal(0, (await LoadAsync(store, "users/0"))!.Age);

        var error = await Assert.ThrowsAnyAsync<JackdawException>(() => store.Operations.PatchAsync("users/0", new PatchRequest { Script = "this.Age = 1;\nthrow new Error('no');" }));
        Assert.Equal("JavaScriptException", error.ServerErrorType);
        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("line 2", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, (await LoadAsync(store, "users/0"))!.Age);
    }

    [Fact]
    public async Task PatchByQueryAndDeleteByQueryAreAwaitableOperations()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 50);
        var patch = await store.Operations.PatchByQueryAsync("from Users where Age >= $min update { this.Name = this.Name + args.suffix; }",
            new Dictionary<string, object?> { ["min"] = 40, ["suffix"] = "!" }, new QueryOperationOptions { RetrieveDetails = true });
        var patched = await patch.WaitForCompletionAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(10, patched.Total);
        Assert.Equal("user45!", (await LoadAsync(store, "users/45"))!.Name);
        Assert.Equal("user5", (await LoadAsync(store, "users/5"))!.Name);

        var delete = await store.Operations.DeleteByQueryAsync("from Users where Age < $max", new Dictionary<string, object?> { ["max"] = 10 }, new QueryOperationOptions { AllowStale = false, StaleTimeout = TimeSpan.FromSeconds(30) });
        var deleted = await delete.WaitForCompletionAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(10, deleted.Total);
        Assert.Null(await LoadAsync(store, "users/3"));
        Assert.NotNull(await LoadAsync(store, "users/10"));
    }

    [Fact]
    public async Task AFailingPatchByQueryThrowsFromWaitForCompletion()
    {
        using var store = await server.NewStoreAsync();
        await StoreUsersAsync(store, 5);
        var operation = await store.Operations.PatchByQueryAsync("from Users update { throw new Error('nope'); }");
        var error = await Assert.ThrowsAsync<JackdawException>(() => operation.WaitForCompletionAsync(TimeSpan.FromSeconds(60)));
        Assert.Equal("JavaScriptException", error.ServerErrorType);
        Assert.Contains("nope", error.Message, StringComparison.Ordinal);
    }
}
