namespace Jackdaw.Client;

/// <summary>One index written by <see cref="IndexCreation.CreateIndexesAsync"/> or <see cref="AbstractJavaScriptIndexCreationTask.ExecuteAsync"/>, and what that did.</summary>
public sealed record IndexDeployment(string Name, IndexDeploymentOutcome Outcome);
