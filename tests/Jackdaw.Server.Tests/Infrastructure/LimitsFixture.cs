namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>One in-process server held to small limits (<see cref="Limits"/>), shared by a test class.</summary>
public sealed class LimitsFixture : ServerFixture
{
    public const int MaxDocument = 100_000;
    public const int MaxBatch = 200_000;
    public const int MaxOther = 50_000;
    public const int MaxBulkInsert = 300_000;
    public const int MaxHeaderCount = 30;
    public const int MaxHeadersTotal = 8192;
    public const int MaxWebSocketMessage = 1024;
    public const int MaxQueryLimit = 50;

    public static readonly string[] Limits =
    [
        $"--Limits:MaxDocumentBodySize={MaxDocument}", $"--Limits:MaxBatchBodySize={MaxBatch}",
        $"--Limits:MaxOtherBodySize={MaxOther}", $"--Limits:MaxBulkInsertBodySize={MaxBulkInsert}",
        $"--Limits:MaxRequestHeaderCount={MaxHeaderCount}", $"--Limits:MaxRequestHeadersTotalSize={MaxHeadersTotal}",
        // Loopback sends a test's bodies far faster; a sender that stops is cut off 2 s in.
        "--Limits:MinRequestBodyDataRate=1000", "--Limits:MinRequestBodyDataRateGracePeriod=2", "--Limits:RequestHeadersTimeout=3",
        $"--Limits:MaxWebSocketMessageSize={MaxWebSocketMessage}", $"--Limits:MaxQueryLimit={MaxQueryLimit}",
    ];

    protected override string[] Args => Limits;
}
