// The bare Kestrel reference for perf/load: one RequestDelegate, one fixed JSON body: by default
// of the same size as Jackdaw's /build/version answer, or of --body-bytes N bytes (the size of a
// document response). Usage: dotnet BareKestrel.dll --urls http://127.0.0.1:18081 [--body-bytes 1100]
var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
builder.WebHost.ConfigureKestrel(kestrel => kestrel.AddServerHeader = false);
var app = builder.Build();
var body = """{"Version":"0.1.0","FullVersion":"0.1.0+0000000000000000000000000000000000000000","CommitHash":"0000000000000000000000000000000000000000"}"""u8.ToArray();
if (int.TryParse(builder.Configuration["body-bytes"], out var size) && size > 16)
    body = System.Text.Encoding.UTF8.GetBytes("{\"Results\":[{\"Text\":\"" + new string('x', size - 32) + "\"}],\"Includes\":{}}");
app.Run(context =>
{
    context.Response.StatusCode = 200;
    context.Response.ContentType = "application/json; charset=utf-8";
    context.Response.ContentLength = body.Length;
    var write = context.Response.BodyWriter.WriteAsync(body);
    return write.IsCompletedSuccessfully ? Task.CompletedTask : write.AsTask();
});
app.Run();
