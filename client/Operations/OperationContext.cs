using Jackdaw.Client.Http;

namespace Jackdaw.Client;

/// <summary>What an operation object needs to run: the store's executor and conventions, and the database it runs on.</summary>
internal sealed record OperationContext(RequestExecutor Executor, DocumentConventions Conventions, string DatabasePath);
