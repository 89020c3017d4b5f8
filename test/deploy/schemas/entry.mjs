// Entry of the vendored validator bundle (see README.md): the ajv-compiled validators of
// the Kubernetes OpenAPI schemas (kubernetes-models) and the KEDA CRD schemas
// (@kubernetes-models/keda), keyed by "<apiVersion>/<kind>".

import { validate as ScaledObject } from "@kubernetes-models/keda/_schemas/ComGithubKedacoreKedaV2ApisKedaV1alpha1ScaledObject.js";
import { validate as TriggerAuthentication } from "@kubernetes-models/keda/_schemas/ComGithubKedacoreKedaV2ApisKedaV1alpha1TriggerAuthentication.js";
import { validate as Deployment } from "kubernetes-models/_schemas/IoK8sApiAppsV1Deployment.js";
import { validate as StatefulSet } from "kubernetes-models/_schemas/IoK8sApiAppsV1StatefulSet.js";
import { validate as HorizontalPodAutoscaler } from "kubernetes-models/_schemas/IoK8sApiAutoscalingV2HorizontalPodAutoscaler.js";
import { validate as Job } from "kubernetes-models/_schemas/IoK8sApiBatchV1Job.js";
import { validate as ConfigMap } from "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap.js";
import { validate as Secret } from "kubernetes-models/_schemas/IoK8sApiCoreV1Secret.js";
import { validate as Service } from "kubernetes-models/_schemas/IoK8sApiCoreV1Service.js";
import { validate as ServiceAccount } from "kubernetes-models/_schemas/IoK8sApiCoreV1ServiceAccount.js";
import { validate as Ingress } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1Ingress.js";
import { validate as NetworkPolicy } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicy.js";
import { validate as PodDisruptionBudget } from "kubernetes-models/_schemas/IoK8sApiPolicyV1PodDisruptionBudget.js";
import { validate as ClusterRoleBinding } from "kubernetes-models/_schemas/IoK8sApiRbacV1ClusterRoleBinding.js";

export const validators = {
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "batch/v1/Job": Job,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "v1/ServiceAccount": ServiceAccount,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/Ingress": Ingress,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": ClusterRoleBinding,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
  "keda.sh/v1alpha1/TriggerAuthentication": TriggerAuthentication,
};
